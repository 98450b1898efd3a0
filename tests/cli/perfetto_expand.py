#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""perfetto_expand.py IN OUT: a Perfetto trace with compressed packets
(TracePacket.compressed_packets, 50: deflate; zstd_compressed_packets, 133:
zstd) written as the plain trace it holds, each bundle replaced by its
packets, as trace_processor's tokenizer expands them.  Checks on the way
what that tokenizer and the schema require: a bundle is a packet of that
one field, less than 512 KB with its keys and lengths; one codec in a
trace; each bundle one whole frame of packets, each packet keyed 0x0a.
Prints "BUNDLES CODEC PLAIN_PACKETS LARGEST_BUNDLE"; exit 1 with the
reason on a violation.  zstd is expanded by the zstd program."""
import subprocess
import sys
import zlib

BUNDLE_MAX = 512000
FIELDS = {50: "deflate", 133: "zstd"}


def varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b):
            raise ValueError("varint past the end")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def packets(b):
    """(head, start, end) of each Trace.packet: its key, its bytes."""
    i = 0
    while i < len(b):
        head = i
        key, i = varint(b, i)
        if key != 0x0A:
            raise ValueError("key %#x at %d, not a packet" % (key, i))
        n, i = varint(b, i)
        if i + n > len(b):
            raise ValueError("packet past the end at %d" % i)
        yield head, i, i + n
        i += n


def bundle_of(p):
    """(field, bytes) if the packet is a compressed bundle, else None."""
    try:
        key, i = varint(p, 0)
        if key >> 3 not in FIELDS or key & 7 != 2:
            return None
        n, j = varint(p, i)
    except ValueError:
        return None
    if j + n != len(p):
        raise ValueError("a bundle with other fields beside its bytes")
    return key >> 3, p[j:]


def expand(field, data):
    if field == 50:
        d = zlib.decompressobj(32 + 15)
        out = d.decompress(data) + d.flush()
        if not d.eof or d.unused_data:
            raise ValueError("deflate bundle not one whole stream")
        return out
    r = subprocess.run(["zstd", "-d", "-c", "-q"], input=data, capture_output=True)
    if r.returncode != 0:
        raise ValueError("zstd: " + r.stderr.decode(errors="replace").strip())
    return r.stdout


def main():
    src = open(sys.argv[1], "rb").read()
    out = bytearray()
    codecs, bundles, plain, largest = set(), 0, 0, 0
    for h, s, e in packets(src):
        b = bundle_of(src[s:e])
        if b is None:
            plain += 1
            out += src[h:e]
            continue
        field, data = b
        whole = e - h
        if whole >= BUNDLE_MAX:
            raise SystemExit("bundle of %d bytes (limit %d)" % (whole, BUNDLE_MAX))
        codecs.add(field)
        if len(codecs) > 1:
            raise SystemExit("two codecs in one trace")
        inner = expand(field, data)
        for _ in packets(inner):  # every packet keyed and whole
            pass
        out += inner
        bundles += 1
        largest = max(largest, whole)
    open(sys.argv[2], "wb").write(out)
    print(bundles, "/".join(FIELDS[c] for c in codecs) or "none", plain, largest)


if __name__ == "__main__":
    try:
        main()
    except ValueError as e:
        sys.exit(str(e))
