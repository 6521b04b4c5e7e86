#!/usr/bin/env python3
"""Pack the labelled vectors of quarantine layer (g) for the binary, from quarantine_dump's output.

  cargo run --example quarantine_dump -- MODEL_DIR eval/quarantine/{corpus,dev,val,val2,…,val14,blind}.json \
      > /tmp/dump.jsonl 2> /tmp/fp.txt
  eval/quarantine/pack_neighbours.py /tmp/dump.jsonl "$(sed -n 's/^fingerprint //p' /tmp/fp.txt)" \
      crates/gza-learn/data/quarantine-neighbours.bin

Format (little-endian): b"GZAQN1\\n", u16 + the model fingerprint, u32 dim, u32 n, then n items of
u8 label (1 hostile), f32 scale, dim i8 (the unit vector / scale), u16 + a UTF-8 snippet of the text.
Deterministic: the same dump gives the same bytes. blind-q3 and blind-q4 are never packed.
"""
import json, struct, sys
import numpy as np

dump, fingerprint, out = sys.argv[1:4]
rows = [json.loads(l) for l in open(dump)]
assert not any("blind-q" in r["set"] for r in rows), "q3/q4 are held out"
dim = len(rows[0]["emb"])
buf = bytearray(b"GZAQN1\n")
fp = fingerprint.encode()
buf += struct.pack("<H", len(fp)) + fp + struct.pack("<II", dim, len(rows))
for r in rows:
    v = np.array(r["emb"], dtype=np.float64)
    v /= np.linalg.norm(v) or 1.0
    scale = float(np.abs(v).max()) / 127.0 or 1.0
    q = np.clip(np.round(v / scale), -127, 127).astype(np.int8)
    text = " ".join(r["text"].split())
    snippet = text if len(text) <= 72 else text[:71].rstrip() + "…"
    s = snippet.encode()
    buf += struct.pack("<Bf", 1 if r["hostile"] else 0, scale) + q.tobytes() + struct.pack("<H", len(s)) + s
open(out, "wb").write(bytes(buf))
print(f"{len(rows)} vectors of {dim}, {len(buf)} bytes -> {out}")
