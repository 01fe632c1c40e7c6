#!/usr/bin/env python3
"""Independent reference for tests/kat.rs: Python's hashlib (OpenSSL) digests of the
pattern byte[i] = (31*i + 7) mod 256 for a few lengths. Run: python3 gen_kat.py"""
import hashlib

for n in (0, 4095, 4096, 4097, 1_000_003):
    data = bytes((31 * i + 7) % 256 for i in range(n))
    for name in ("sha1", "sha224", "sha256", "sha384", "sha512"):
        print(n, name, hashlib.new(name, data).hexdigest())
