#!/usr/bin/env python3
"""Independent reference for scalrand_pool::numa's known-answer tests.

Written from the specifications, not from the Rust code under test:
  - ChaCha20 block function: RFC 8439 section 2.3 (quarter round 2.1, state layout 2.3,
    serialisation little-endian words).
  - Fast key erasure: D. J. Bernstein, "Fast-key-erasure random-number generators" (2017),
    and Linux 5.18 drivers/char/random.c crng_fast_key_erasure(): block 0 of ChaCha20 under
    the key with a zero nonce; the first 32 bytes are the next key, the rest is output.
  - The pools' key schedule as documented in crates/pool/src/numa/mod.rs ("Key schedule"),
    with SHA-256 from Python's hashlib (FIPS 180-4).

Self-checks (asserted below before anything is written) are RFC 8439's published vectors:
  - section 2.3.2 (block function test vector),
  - section 2.4.2 (keystream of the "sunscreen" example, block counter 1),
  - appendix A.1 test vector #1 (all-zero key, nonce and counter).

Reduced-round ChaCha (ChaCha8, ChaCha12): D. J. Bernstein, "ChaCha, a variant of Salsa20"
(2008), in RFC 8439's state layout (32-bit counter in word 12, 96-bit nonce, here zero). Self-
checked against draft-strombergson-chacha-test-vectors-01, TC1 (256-bit all-zero key and IV,
block 0), where the original 64-bit-counter layout and RFC 8439's agree.

Run:  python3 chacha_ref.py > numa_vectors.txt   (from this directory)
The output is committed as tests/reference/numa_vectors.txt and read by tests/numa_kat.rs.
      python3 chacha_ref.py rounds > ../data/chacha_rounds.txt
writes the ChaCha8/12/20 keystream vectors read by tests/numa_kat.rs (`keystream_rounds`).
"""
import hashlib
import struct
import sys

MASK = 0xFFFFFFFF


def rotl(v, c):
    return ((v << c) & MASK) | (v >> (32 - c))


def quarter(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & MASK; s[d] = rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & MASK; s[b] = rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & MASK; s[d] = rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & MASK; s[b] = rotl(s[b] ^ s[c], 7)


def block(key, counter, nonce, rounds=20):
    assert len(key) == 32 and len(nonce) == 12
    state = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    state += list(struct.unpack("<8I", key))
    state += [counter & MASK]
    state += list(struct.unpack("<3I", nonce))
    w = list(state)
    assert rounds in (8, 12, 20)
    for _ in range(rounds // 2):
        quarter(w, 0, 4, 8, 12); quarter(w, 1, 5, 9, 13)
        quarter(w, 2, 6, 10, 14); quarter(w, 3, 7, 11, 15)
        quarter(w, 0, 5, 10, 15); quarter(w, 1, 6, 11, 12)
        quarter(w, 2, 7, 8, 13); quarter(w, 3, 4, 9, 14)
    return struct.pack("<16I", *[(w[i] + state[i]) & MASK for i in range(16)])


def keystream(key, counter, n, rounds=20):
    """Blocks counter, counter + 1, ... with the zero nonce; the counter wraps mod 2^32."""
    out = b""
    while len(out) < n:
        out += block(key, counter & MASK, bytes(12), rounds)
        counter += 1
    return out[:n]


def fke(key):
    """One fast-key-erasure step: returns (new key, 32 output bytes)."""
    b = block(key, 0, bytes(12))
    return b[:32], b[32:]


def sha256(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
    return h.digest()


# ---- self-checks against RFC 8439 -------------------------------------------------------
KEY_0_31 = bytes(range(32))
# RFC 8439 2.3.2: state words after the block function, serialised little-endian.
rfc_232_words = [0xE4E7F110, 0x15593BD1, 0x1FDD0F50, 0xC47120A3, 0xC7F4D1C7, 0x0368C033,
                 0x9AAA2204, 0x4E6CD4C3, 0x466482D2, 0x09AA9F07, 0x05D7C214, 0xA2028BD9,
                 0xD19C12B5, 0xB94E16DE, 0xE883D0CB, 0x4E3C50A2]
RFC_232 = struct.pack("<16I", *rfc_232_words)
assert block(KEY_0_31, 1, bytes.fromhex("000000090000004a00000000")) == RFC_232
# RFC 8439 2.4.2: keystream for counter 1 (first 114 bytes used by the example).
RFC_242 = bytes.fromhex(
    "224f51f3401bd9e12fde276fb8631ded8c131f823d2c06"
    "e27e4fcaec9ef3cf788a3b0aa372600a92b57974cded2b"
    "9334794cba40c63e34cdea212c4cf07d41b769a6749f3f"
    "630f4122cafe28ec4dc47e26d4346d70b98c73f3e9c53a"
    "c40c5945398b6eda1a832c89c167eacd901d7e2bf363")
n = bytes.fromhex("000000000000004a00000000")
assert (block(KEY_0_31, 1, n) + block(KEY_0_31, 2, n))[:114] == RFC_242
# RFC 8439 A.1 #1: all-zero key, nonce, counter 0.
RFC_A11 = bytes.fromhex(
    "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
    "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586")
assert block(bytes(32), 0, bytes(12)) == RFC_A11
# draft-strombergson-chacha-test-vectors-01 TC1, 256-bit all-zero key and IV, block 0.
assert block(bytes(32), 0, bytes(12), 8) == bytes.fromhex(
    "3e00ef2f895f40d67f5bb8e81f09a5a12c840ec3ce9a7f3b181be188ef711a1e"
    "984ce172b9216f419f445367456d5619314a42a3da86b001387bfdb80e0cfe42")
assert block(bytes(32), 0, bytes(12), 12) == bytes.fromhex(
    "9bf49a6a0755f953811fce125f2683d50429c3bb49e074147e0089a52eae155f"
    "0564f879d27ae3c02ce82834acfa8c793a629f2ca0de6919610be82f411326be")
assert block(bytes(32), 0, bytes(12), 20) == RFC_A11


def emit_rounds():
    """ChaCha8/12/20 keystream vectors: (rounds, key, counter, length) -> keystream."""
    print("# Generated by tests/reference/chacha_ref.py rounds; see its docstring for provenance.")
    print("# One vector per line: rounds counter key length keystream (hex; counter decimal).")
    cases = [
        (bytes(32), 0, 64),
        (bytes(range(32)), 1, 1),
        (bytes(range(32)), 0, 1025),
        (bytes((7 * i + 3) & 0xFF for i in range(32)), 5, 4096 + 17),
        # Crosses the 2^32 counter boundary after 3 blocks: word 12 wraps to 0, nonce stays 0.
        (bytes(range(255, 223, -1)), 0xFFFFFFFD, 1024 + 100),
    ]
    for rounds in (8, 12, 20):
        for key, counter, n in cases:
            print(f"{rounds} {counter} {key.hex()} {n} {keystream(key, counter, n, rounds).hex()}")


if len(sys.argv) > 1:
    assert sys.argv[1:] == ["rounds"], "usage: chacha_ref.py [rounds]"
    emit_rounds()
    sys.exit(0)


def emit(name, data):
    print(f"{name} = {data.hex()}")


print("# Generated by tests/reference/chacha_ref.py; see its docstring for provenance.")
print("# RFC 8439 vectors (copied from the RFC, asserted by the script):")
emit("rfc8439_2_3_2_key", KEY_0_31)
emit("rfc8439_2_3_2_nonce", bytes.fromhex("000000090000004a00000000"))
emit("rfc8439_2_3_2_block_counter1", RFC_232)
emit("rfc8439_a_1_1_block_zero", RFC_A11)
emit("rfc8439_2_4_2_nonce", n)
emit("rfc8439_2_4_2_keystream_counter1", RFC_242)

print("# One fast-key-erasure step, computed by this script:")
fke_key = bytes((7 * i + 3) & 0xFF for i in range(32))
k1, out = fke(fke_key)
emit("fke_key", fke_key)
emit("fke_next_key", k1)
emit("fke_output", out)

# A slot batch (the pools' BATCH_LEN): its first 32 bytes become the next slot key.
BATCH_LEN = 7168

print("# The whole key schedule: from_seed(Topology [[0],[1]], seed 00..1f), then")
print("# cpu 0 reads 32 bytes, cpu 1 reads 32 bytes, cpu 0 reads 4096 bytes.")
seed = KEY_0_31
# input pool
H = hashlib.sha256(b"scalrand numa input pool v1")
H.update(struct.pack("<Q", len(seed))); H.update(seed)
s = H.digest()
extract_out = sha256(b"scalrand numa out", s)


def node_reseed(k, label, data):
    return sha256(b"scalrand numa node ", label, k, struct.pack("<Q", len(data)), data)


K = [bytes(32), bytes(32)]
K[0] = node_reseed(K[0], b"init", extract_out)
K[0], o = fke(K[0])            # node 0 initialises node 1 from its output
K[1] = node_reseed(K[1], b"init", o)
# cpu 0: slot 0 takes a key from node 0, refills its batch, hands out 32 bytes
K[0], slot0 = fke(K[0])
b = keystream(slot0, 0, BATCH_LEN)
slot0, first0 = b[:32], b[32:64]
# cpu 1: the same on node 1
K[1], slot1 = fke(K[1])
b = keystream(slot1, 0, BATCH_LEN)
slot1, first1, second1 = b[:32], b[32:64], b[64:96]
# cpu 0, 4096 bytes: a one-read key by fast key erasure of the slot key, keystream from block 0
slot0, one_read = fke(slot0)
big = keystream(one_read, 0, 4096)
emit("schedule_seed", seed)
emit("schedule_cpu0_first32", first0)
emit("schedule_cpu1_first32", first1)
emit("schedule_cpu0_4096_sha256", sha256(big))
emit("schedule_cpu0_4096_head", big[:64])

print("# Then cpu 0 reads 1 MiB + 100 bytes (a huge read): one-read key k = FKE(slot key);")
print("# chunk 1 is blocks 1.. of k, chunk 2 blocks 0.. of the key taken from block 0 of k.")
slot0, k = fke(slot0)
nk = block(k, 0, bytes(12))[:32]
huge = keystream(k, 1, 1 << 20) + keystream(nk, 0, 100)
emit("schedule_cpu0_huge_sha256", sha256(huge))
print("# Then cpu 1 reads 32 bytes more (still from its first batch).")
emit("schedule_cpu1_second32", second1)

print("# The same schedule with the output keystream at 12 and at 8 rounds (NodePools::with_rounds):")
print("# key derivations (node reseeds, fast key erasure) stay ChaCha20; batches and large reads")
print("# use the reduced rounds. cpu 0 reads 32 bytes, then 4096 bytes.")
for r in (12, 8):
    K0 = node_reseed(bytes(32), b"init", extract_out)
    K0, _ = fke(K0)                 # node 0 initialises node 1
    K0, slot = fke(K0)              # slot 0's key
    b = keystream(slot, 0, BATCH_LEN, r)
    slot, first = b[:32], b[32:64]
    slot, one_read = fke(slot)
    emit(f"schedule{r}_cpu0_first32", first)
    emit(f"schedule{r}_cpu0_4096_sha256", sha256(keystream(one_read, 0, 4096, r)))
