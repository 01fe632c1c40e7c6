#!/usr/bin/env python3
"""Independent reference for scalrand-pool's Fortuna: writes the known-answer vectors in
crates/pool/tests/data/fortuna_*.txt.

Provenance
----------
Written from the specification, not from the Rust code:
  * N. Ferguson, B. Schneier, T. Kohno, "Cryptography Engineering" (2010), section 9.4
    (generator) and 9.5 (accumulator);
  * PyCrypto's FortunaGenerator / FortunaAccumulator (lib/Crypto/Random/Fortuna/) for the
    conventions FS&K leave open: 128-bit LITTLE-endian counter, reseed
    K = SHA256(SHA256(K || s)) and C += 1, pool digests SHA256(SHA256(pool)), an event
    appended as source byte || length byte || data;
  * this project's design for the ChaCha20 counter mapping and the Fortuna read modes
    (Locked: 4 KiB generator calls; Concurrent: FreeBSD's 2019 concurrent read, r349154),
    and for the Concurrent key schedule that gives each reader a private key derived under
    the lock (module docs of crates/pool/src/fortuna/mod.rs, "Concurrent key schedule").
The script checks itself against PyCrypto's published self-test vectors
(SelfTest/Random/Fortuna/test_FortunaGenerator.py and test_FortunaAccumulator.py) before it
writes anything. Primitives come from the `cryptography` package (OpenSSL): AES-256-ECB for
single blocks and ChaCha20 with its 16-byte "nonce" = 4-byte LE block counter || 12-byte nonce.

One deliberate difference from PyCrypto: FS&K's generator serves a request of n <= 2^20 bytes
in ONE call (then rekeys once); PyCrypto's pseudo_random_data(2^20) makes two internal calls
(2^20 bytes, then 0 bytes) and so rekeys twice. We follow FS&K; the n = 2^20 vector pins it.

Usage: python3 fortuna_ref.py [OUTDIR]   (default: ../data next to this file)
Requires: pip install cryptography
"""
import hashlib
import os
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

MIB = 1 << 20
KIB4 = 4096


def shad256(b):
    return hashlib.sha256(hashlib.sha256(b).digest()).digest()


class AesPrf:
    name = "aes"
    block = 16

    @staticmethod
    def blocks(key, ctr, count):
        """count blocks E(key, ctr), E(key, ctr+1), ... (counter 128-bit little-endian)."""
        enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
        data = b"".join(((ctr + i) % (1 << 128)).to_bytes(16, "little") for i in range(count))
        return enc.update(data) + enc.finalize()


class ChaChaPrf:
    name = "chacha"
    block = 64

    @staticmethod
    def blocks(key, ctr, count):
        """ChaCha20 block function with the 128-bit counter C in state words 12..15, little-endian.

        cryptography's 16-byte nonce is exactly words 12..15 (LE counter word, then the
        96-bit nonce), so the 16-byte nonce is C.to_bytes(16, 'little'). We never let OpenSSL
        carry out of word 12 on its own: runs are cut where the low 32 bits wrap.
        """
        out = []
        c = ctr % (1 << 128)
        left = count
        while left:
            run = min(left, (1 << 32) - (c & 0xFFFFFFFF))
            enc = Cipher(algorithms.ChaCha20(key, c.to_bytes(16, "little")), None).encryptor()
            out.append(enc.update(b"\0" * (64 * run)))
            c = (c + run) % (1 << 128)
            left -= run
        return b"".join(out)


class Generator:
    def __init__(self, prf):
        self.prf = prf
        self.key = b"\0" * 32
        self.ctr = 0
        self.seeded = False

    def reseed(self, seed):
        self.key = shad256(self.key + seed)
        self.ctr = (self.ctr + 1) % (1 << 128)
        self.seeded = True

    def _blocks(self, count):
        out = self.prf.blocks(self.key, self.ctr, count)
        self.ctr = (self.ctr + count) % (1 << 128)
        return out

    def rekey(self):
        nb = -(-32 // self.prf.block)
        self.key = self._blocks(nb)[:32]

    def pseudo_random_data(self, n):
        assert 0 <= n <= MIB
        assert self.seeded, "not seeded"
        out = self._blocks(-(-n // self.prf.block))[:n]
        self.rekey()
        return out


def fortuna_locked_read(gen, n):
    """Locked mode: the request is served as generator calls of at most 4 KiB each."""
    out = [gen.pseudo_random_data(min(KIB4, n))]
    n -= min(KIB4, n)
    while n:
        step = min(KIB4, n)
        out.append(gen.pseudo_random_data(step))
        n -= step
    return b"".join(out)


READER_FIRST_BLOCK = 1


def fortuna_concurrent_read(gen, n):
    """Concurrent mode (FreeBSD r349154's concurrent read, with the 2026 key schedule that
    keeps forward secrecy between readers), written from the spec in the module docs of
    crates/pool/src/fortuna/mod.rs, "Concurrent key schedule".

    Under the lock, from the global (K, C): the reader's private key k_r is the first 32 bytes
    of the KB blocks E(K, C) .. E(K, C + KB - 1); the new global key K' is the first 32 bytes
    of the next KB blocks E(K, C + KB) .. E(K, C + 2 KB - 1); C' = C + 2 KB. That is all the
    lock covers, whatever n is (n = 0 included: k_r is derived and thrown away).
    Outside the lock the reader serves pieces of at most 1 MiB (none when n == 0) under k_r,
    counter starting at READER_FIRST_BLOCK; between two pieces it replaces k_r by the first
    32 bytes of its own next KB blocks.
    """
    prf = gen.prf
    kb = -(-32 // prf.block)
    pieces = [MIB] * (n // MIB)
    if n % MIB:
        pieces.append(n % MIB)
    k, c = gen.key, gen.ctr
    reader_key = prf.blocks(k, c, kb)[:32]
    gen.key = prf.blocks(k, (c + kb) % (1 << 128), kb)[:32]
    gen.ctr = (c + 2 * kb) % (1 << 128)
    # the reader, outside the lock
    out = []
    k, c = reader_key, READER_FIRST_BLOCK
    for i, p in enumerate(pieces):
        nb = -(-p // prf.block)
        out.append(prf.blocks(k, c, nb)[:p])
        c += nb
        if i + 1 < len(pieces):
            k = prf.blocks(k, c, kb)[:32]
            c += kb
    return b"".join(out)


class Accumulator:
    def __init__(self, min_pool_size=64):
        self.pools = [b""] * 32
        self.count = 0
        self.min = min_pool_size
        self.last = None

    def add(self, source, pool, data):
        assert 1 <= len(data) <= 32 and 0 <= pool < 32 and 0 <= source < 256
        self.pools[pool] += bytes([source, len(data)]) + data

    def reseed_if_due(self, gen, now_ms):
        if len(self.pools[0]) < self.min:
            return False
        if self.last is not None and now_ms - self.last < 100:
            return False
        self.count += 1
        self.last = now_ms
        seed = b""
        for i in range(32):
            if self.count % (1 << i) == 0:
                seed += shad256(self.pools[i])
                self.pools[i] = b""
        gen.reseed(seed)
        return True


def self_check():
    # PyCrypto test_FortunaGenerator.py
    g = Generator(AesPrf)
    g.reseed(b"Hello")
    assert g.key.hex() == "0ea6919d4361551364242a4ba890f8f073676e82cf1a52bb880f7e496648b565"
    assert g.ctr == 1
    assert g.pseudo_random_data(32).hex() == (
        "7cbe2c17684ac223d08969ee8b565616717661c0d2f4758bd6ba140bf3791abd")
    assert g.key.hex() == "33a1bb21987859caf2bbfc5615bef56de6b71ff9f37112d0c193a135160862b7"
    assert g.ctr == 5
    assert g.pseudo_random_data(32).hex() == (
        "fd6648ba3086e919cee34904ef09a7ff021f77580558b8c3e9248275f23042bf")
    # PyCrypto test_FortunaAccumulator.py (pool digests and the first reseed)
    assert shad256(b"").hex() == "5df6e0e2761359d30a8275058e299fcc0381534545f55cf43e41983f5d4c9456"
    assert shad256(b"abc").hex() == "4f8b42c22dd3729b519ba6f68d2da7cc5b2d606d05daed5ad5128cc03e6c6358"
    a = Accumulator()
    g = Generator(AesPrf)
    for _ in range(2):
        for p in range(32):
            a.add(42, p, b"X" * 32)
    assert shad256(a.pools[0]).hex() == (
        "aef42a5dcbddab67e8efa118e1b47fde5d697f89beb971b99e6e8e5e89fbf064")
    assert a.reseed_if_due(g, 0)
    assert g.pseudo_random_data(32).hex() == (
        "b7b86bd9a27d96d7bb4add1b6b10d1572350b1c61253db2f8da233be726dc15f")
    assert g.key.hex() == "f23ad749f33066ff53d307914fbf5b21da9667c7e86ba247655c9490e9d94a7c"
    assert g.ctr == 5
    # RFC 8439 section 2.3.2 block function vector, through our C-to-state mapping:
    # counter word = 1, nonce = 000000090000004a00000000 -> C's 16 LE bytes.
    key = bytes(range(32))
    c = int.from_bytes(bytes.fromhex("01000000" "000000090000004a00000000"), "little")
    blk = ChaChaPrf.blocks(key, c, 1)
    assert blk.hex() == (
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
        "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"), blk.hex()


def out_line(n, data):
    if n <= 256:
        return "%d %s" % (n, data.hex())
    return "%d sha256:%s" % (n, hashlib.sha256(data).hexdigest())


def pattern(n, tag):
    return bytes((i * 7 + tag) & 0xFF for i in range(n))


def generator_cases():
    """Lines: 'case NAME', 'prf aes|chacha', 'reseed HEX', 'read N HEX|sha256:HEX',
    'key HEX' (key after the previous op), 'counter N'."""
    lines = []
    for prf in (AesPrf, ChaChaPrf):
        def case(name, ops):
            g = Generator(prf)
            lines.append("case %s_%s" % (prf.name, name))
            lines.append("prf %s" % prf.name)
            for op, arg in ops:
                if op == "reseed":
                    g.reseed(arg)
                    lines.append("reseed %s" % arg.hex())
                else:
                    lines.append("read " + out_line(arg, g.pseudo_random_data(arg)))
            lines.append("key %s" % g.key.hex())
            lines.append("counter %d" % g.ctr)
            lines.append("end")
        case("hello", [("reseed", b"Hello"), ("read", 32), ("read", 32)])
        case("odd_lengths", [("reseed", b"odd")] + [("read", n) for n in (1, 15, 16, 17, 31, 33, 63, 64, 65, 100, 255)])
        case("zero_length", [("reseed", b"zero"), ("read", 0), ("read", 0), ("read", 16)])
        case("max_request", [("reseed", b"max"), ("read", MIB), ("read", 48)])
        case("max_minus_one", [("reseed", b"max-1"), ("read", MIB - 1), ("read", 5)])
        case("several_reseeds", [("reseed", b"a"), ("read", 20), ("reseed", b"b"), ("reseed", b""),
                                 ("read", 40), ("reseed", bytes(range(256)) * 4), ("read", 70)])
        case("empty_seed", [("reseed", b""), ("read", 32)])
    return lines


def counter_wrap_cases():
    """Internal-state vectors: start from KEY and COUNTER (set directly, only the crate's
    unit tests can do that) and read; exercises carries at 2^32, 2^64 and 2^128."""
    lines = []
    key = hashlib.sha256(b"counter-wrap key").digest()
    for prf in (AesPrf, ChaChaPrf):
        for start in ((1 << 32) - 2, (1 << 64) - 2, (1 << 128) - 2):
            g = Generator(prf)
            g.key, g.ctr, g.seeded = key, start, True
            data = g.pseudo_random_data(4 * prf.block + 3)
            lines.append("wrap %s %s %d %s %s %d" % (prf.name, key.hex(), start, data.hex(),
                                                   g.key.hex(), g.ctr))
    return lines


def fortuna_cases():
    """Fortuna::with_seed(mode, SEED) (generator reseeded once with SEED), then fills."""
    lines = []
    for prf in (AesPrf, ChaChaPrf):
        for mode, read in (("locked", fortuna_locked_read), ("concurrent", fortuna_concurrent_read)):
            g = Generator(prf)
            seed = hashlib.sha256(b"fortuna value stability").digest()
            g.reseed(seed)
            lines.append("case %s_%s" % (prf.name, mode))
            lines.append("prf %s" % prf.name)
            lines.append("mode %s" % mode)
            lines.append("seed %s" % seed.hex())
            for n in (0, 1, 32, 100, 4096, 4097, 10000, MIB, MIB + 1, 2 * MIB + 17, 3):
                lines.append("fill " + out_line(n, read(g, n)))
            lines.append("end")
    return lines


def accumulator_cases():
    """Accumulator reseeds driving an AES generator, with a manual clock in milliseconds.
    Ops: 'event SOURCE POOL HEX', 'time MS', 'reseed_if_due 0|1', 'read N HEX'."""
    lines = ["case accumulator_schedule"]
    a = Accumulator()
    g = Generator(AesPrf)
    t = 1000
    for r in range(1, 11):
        for p in range(32):
            data = pattern(1 + (r * 5 + p) % 32, r + p)
            a.add(p % 7, p, data)
            lines.append("event %d %d %s" % (p % 7, p, data.hex()))
        for _ in range(2):
            data = pattern(32, 100 + r)
            a.add(9, 0, data)
            lines.append("event 9 0 %s" % data.hex())
        # one early attempt (too soon after the previous reseed), then one on time
        if r > 1:
            lines.append("time %d" % (t + 99))
            lines.append("reseed_if_due %d" % a.reseed_if_due(g, t + 99))
        t += 100
        lines.append("time %d" % t)
        lines.append("reseed_if_due %d" % a.reseed_if_due(g, t))
        lines.append("read " + out_line(40, g.pseudo_random_data(40)))
    lines.append("end")
    return lines


def write(path, header, lines):
    with open(path, "w") as f:
        f.write("# Generated by crates/pool/tests/reference/fortuna_ref.py; do not edit.\n")
        for h in header:
            f.write("# %s\n" % h)
        for line in lines:
            f.write(line + "\n")


def main():
    self_check()
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "data")
    write(os.path.join(outdir, "fortuna_generator.txt"),
          ["Generator known answers (AES-256 and ChaCha20 PRFs)."], generator_cases())
    write(os.path.join(outdir, "fortuna_counter_wrap.txt"),
          ["wrap PRF KEY START_COUNTER OUTPUT(4 blocks + 3 bytes) KEY_AFTER COUNTER_AFTER"],
          counter_wrap_cases())
    write(os.path.join(outdir, "fortuna_modes.txt"),
          ["Fortuna Locked and Concurrent sequential reads (key schedule value stability)."],
          fortuna_cases())
    write(os.path.join(outdir, "fortuna_accumulator.txt"),
          ["Accumulator: 32 pools, min pool size 64, 100 ms rule, AES generator."],
          accumulator_cases())


if __name__ == "__main__":
    main()
