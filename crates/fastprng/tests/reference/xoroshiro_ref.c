/*
 * Independent reference for scalrand-fastprng's known-answer tests.
 *
 * The three generators below are transcriptions of the published reference C code by
 * David Blackman and Sebastiano Vigna (public domain, CC0), from
 * https://prng.di.unimi.it/ :
 *   xoroshiro128plus.c       (xoroshiro128+  1.0, a=24 b=16 c=37)
 *   xoroshiro128plusplus.c   (xoroshiro128++ 1.0, a=49 b=21 c=28, rotl(s0+s1,17)+s0)
 *   xoroshiro128starstar.c   (xoroshiro128** 1.0, a=24 b=16 c=37, rotl(s0*5,7)*9)
 * with their jump() (2^64 steps) and long_jump() (2^96 steps) polynomials, and
 * splitmix64.c for seeding from one u64 (the convention of rand_xoshiro's seed_from_u64:
 * s0 = first splitmix64 output, s1 = second).
 *
 * Build and regenerate the committed vectors (tests/data/xoroshiro_kat.txt) with:
 *   cc -O2 -std=c99 -o /tmp/xoroshiro_ref tests/reference/xoroshiro_ref.c
 *   /tmp/xoroshiro_ref > tests/data/xoroshiro_kat.txt
 *
 * Output format, one record per line, all numbers in hex without 0x:
 *   <variant> <case> <s0> <s1> <n> <out_1> ... <out_n>
 * where (s0, s1) is the starting state, and case is one of
 *   next       n outputs of next() from (s0, s1)
 *   jump       state after jump(), then n outputs
 *   long_jump  state after long_jump(), then n outputs
 *   jump3      state after three jump()s, then n outputs
 *   splitmix   (s0, s1) = the state seed_from_u64(s0) gives; s1 column holds that state's s1
 *              and the s0 column the seed; then n outputs from that state
 */
#include <stdint.h>
#include <stdio.h>
#include <inttypes.h>

static uint64_t s[2];
static int variant; /* 0 = +, 1 = ++, 2 = ** */

static inline uint64_t rotl(const uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t next(void) {
    const uint64_t s0 = s[0];
    uint64_t s1 = s[1];
    uint64_t result;
    if (variant == 0) {
        result = s0 + s1;
    } else if (variant == 1) {
        result = rotl(s0 + s1, 17) + s0;
    } else {
        result = rotl(s0 * 5, 7) * 9;
    }
    s1 ^= s0;
    if (variant == 1) {
        s[0] = rotl(s0, 49) ^ s1 ^ (s1 << 21);
        s[1] = rotl(s1, 28);
    } else {
        s[0] = rotl(s0, 24) ^ s1 ^ (s1 << 16);
        s[1] = rotl(s1, 37);
    }
    return result;
}

static void apply(const uint64_t poly[2]) {
    uint64_t s0 = 0, s1 = 0;
    for (int i = 0; i < 2; i++)
        for (int b = 0; b < 64; b++) {
            if (poly[i] & UINT64_C(1) << b) {
                s0 ^= s[0];
                s1 ^= s[1];
            }
            next();
        }
    s[0] = s0;
    s[1] = s1;
}

static const uint64_t JUMP_PLUS[2] = {0xdf900294d8f554a5, 0x170865df4b3201fc};
static const uint64_t LONG_JUMP_PLUS[2] = {0xd2a98b26625eee7b, 0xdddf9b1090aa7ac1};
static const uint64_t JUMP_PP[2] = {0x2bd7a6a6e99c2ddc, 0x0992ccaf6a6fca05};
static const uint64_t LONG_JUMP_PP[2] = {0x360fd5f2cf8d5d99, 0x9c6e6877736c46e3};

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
}

static const char *NAMES[3] = {"plus", "plusplus", "starstar"};

static void emit(const char *c, uint64_t a, uint64_t b, int n) {
    printf("%s %s %016" PRIx64 " %016" PRIx64 " %d", NAMES[variant], c, a, b, n);
    for (int i = 0; i < n; i++) printf(" %016" PRIx64, next());
    printf("\n");
}

int main(void) {
    static const uint64_t starts[][2] = {
        {1, 2},
        {0x0123456789abcdef, 0xfedcba9876543210},
        {0xffffffffffffffff, 0xffffffffffffffff},
        {0x8000000000000000, 0},
    };
    for (variant = 0; variant < 3; variant++) {
        const uint64_t *jp = variant == 1 ? JUMP_PP : JUMP_PLUS;
        const uint64_t *ljp = variant == 1 ? LONG_JUMP_PP : LONG_JUMP_PLUS;
        for (unsigned k = 0; k < sizeof starts / sizeof *starts; k++) {
            uint64_t a = starts[k][0], b = starts[k][1];
            s[0] = a; s[1] = b; emit("next", a, b, 16);
            s[0] = a; s[1] = b; apply(jp); emit("jump", a, b, 8);
            s[0] = a; s[1] = b; apply(ljp); emit("long_jump", a, b, 8);
            s[0] = a; s[1] = b; apply(jp); apply(jp); apply(jp); emit("jump3", a, b, 8);
        }
        static const uint64_t seeds[] = {0, 1, 42, 0xdeadbeefcafebabe};
        for (unsigned k = 0; k < sizeof seeds / sizeof *seeds; k++) {
            uint64_t x = seeds[k];
            s[0] = splitmix64(&x);
            s[1] = splitmix64(&x);
            emit("splitmix", seeds[k], s[1], 8);
        }
    }
    return 0;
}
