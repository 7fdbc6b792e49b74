#!/usr/bin/env python3
"""Writes tests/io/data/reference.safetensors, a small safetensors file made independently of cputrain's writer.

The file follows the format as documented by Hugging Face (8-byte little-endian header length, JSON header padded
with spaces to a multiple of 8, then the little-endian row-major data) using only the standard library, so that
tests/io/safetensors_test.cpp can check cputrain's reader against bytes that cputrain did not produce. It lays
the tensors out in name order (not dtype order, as the Hugging Face writer and cputrain do), which leaves the F32
and I64 tensors at offsets that are not multiples of their element size: readers must cope with that.

The expected values are repeated literally in the test; if you change them here, change them there.

Usage: python3 scripts/make_safetensors_reference.py [output path]
"""

import json
import os
import struct
import sys


def bf16_bytes(values):
    # Every value here is exactly representable in bf16, so the high half of the float32 is the bf16.
    out = b""
    for v in values:
        f32 = struct.pack("<f", v)
        assert f32[:2] == b"\x00\x00", f"{v} is not exactly representable in bf16"
        out += f32[2:]
    return out


TENSORS = [
    # name, dtype, shape, data
    ("a.f16", "F16", [2, 2], struct.pack("<4e", 1.0, -2.5, 65504.0, 2.0**-24)),
    ("b.bf16", "BF16", [3], bf16_bytes([1.0, -2.5, 3.140625])),
    ("c.f32", "F32", [2, 3], struct.pack("<6f", 0.5, -1.25, 3.0, 100.0, -0.0, 1024.5)),
    ("d.i64", "I64", [2], struct.pack("<2q", -1, 2**53 + 1)),
    ("e.scalar", "F32", [], struct.pack("<f", 42.0)),
    ("f.empty", "F32", [0, 3], b""),
]
METADATA = {"format": "pt", "producer": "make_safetensors_reference.py"}


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "io", "data", "reference.safetensors")
    header = {}
    data = b""
    for name, dtype, shape, payload in sorted(TENSORS):
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(payload)]}
        data += payload
    header["__metadata__"] = METADATA  # last, where the Hugging Face writer puts it first: order must not matter
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(out_path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.write(data)


if __name__ == "__main__":
    main()
