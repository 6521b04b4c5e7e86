#!/usr/bin/env python3
"""An independent reference for gza's sentence embeddings: the same BERT forward pass in numpy,
read straight from the model folder, with Hugging Face's tokenizer.json (WordPiece) rules.

Used to produce the expected values in crates/gza-embed/src/lib.rs's test; not needed by CI.
Usage: scripts/reference-embed.py MODEL_DIR "sentence" ...   (needs numpy)
"""
import json, struct, sys, unicodedata
import numpy as np

def load(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        dt = {"F32": np.float32, "I64": np.int64}[e["dtype"]]
        out[name] = np.frombuffer(data[a:b], dtype=dt).reshape(e["shape"])
    return out

def basic_tokens(text):
    # Hugging Face BasicTokenizer: clean, CJK split, lowercase + strip accents, split punctuation.
    def is_punct(c):
        cp = ord(c)
        if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
            return True
        return unicodedata.category(c).startswith("P")
    cleaned = []
    for c in text:
        cp = ord(c)
        if cp == 0 or cp == 0xFFFD or (unicodedata.category(c).startswith("C") and c not in "\t\n\r"):
            continue
        cjk = 0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2FA1F or 0xF900 <= cp <= 0xFAFF
        cleaned.append(" " if c.isspace() else (f" {c} " if cjk else c))
    out = []
    for tok in "".join(cleaned).split():
        tok = unicodedata.normalize("NFD", tok.lower())
        tok = "".join(c for c in tok if unicodedata.category(c) != "Mn")
        cur = ""
        for c in tok:
            if is_punct(c):
                if cur:
                    out.append(cur)
                cur = ""
                out.append(c)
            else:
                cur += c
        if cur:
            out.append(cur)
    return out

def wordpiece(word, vocab):
    if len(word) > 100:
        return ["[UNK]"]
    pieces, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            sub = ("##" if start else "") + word[start:end]
            if sub in vocab:
                found = sub
                break
            end -= 1
        if found is None:
            return ["[UNK]"]
        pieces.append(found)
        start = end
    return pieces

def embed(w, vocab, cfg, text, max_len=256):
    toks = ["[CLS]"]
    for t in basic_tokens(text):
        toks += wordpiece(t, vocab)
    toks = toks[: max_len - 1] + ["[SEP]"]
    ids = [vocab[t] for t in toks]
    h, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    eps = cfg.get("layer_norm_eps", 1e-12)
    def ln(x, name):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + eps) * w[name + ".weight"] + w[name + ".bias"]
    def lin(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]
    from math import erf, sqrt
    verf = np.vectorize(erf)
    n = len(ids)
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n] \
        + w["embeddings.token_type_embeddings.weight"][0]
    x = ln(x.astype(np.float64), "embeddings.LayerNorm")
    d = h // heads
    for l in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{l}"
        q, k, v = (lin(x, f"{p}.attention.self.{n_}") for n_ in ("query", "key", "value"))
        ctx = np.zeros_like(x)
        for hd in range(heads):
            s = slice(hd * d, (hd + 1) * d)
            sc = q[:, s] @ k[:, s].T / np.sqrt(d)
            sc = np.exp(sc - sc.max(-1, keepdims=True))
            sc /= sc.sum(-1, keepdims=True)
            ctx[:, s] = sc @ v[:, s]
        x = ln(x + lin(ctx, f"{p}.attention.output.dense"), f"{p}.attention.output.LayerNorm")
        up = lin(x, f"{p}.intermediate.dense")
        up = 0.5 * up * (1 + verf(up / sqrt(2)))
        x = ln(x + lin(up, f"{p}.output.dense"), f"{p}.output.LayerNorm")
    e = x.mean(0)
    return e / np.linalg.norm(e)

if __name__ == "__main__":
    d = sys.argv[1]
    cfg = json.load(open(f"{d}/config.json"))
    vocab = {t: i for i, t in enumerate(open(f"{d}/vocab.txt", encoding="utf-8").read().split("\n"))}
    w = load(f"{d}/model.safetensors")
    embs = [embed(w, vocab, cfg, s) for s in sys.argv[2:]]
    for s, e in zip(sys.argv[2:], embs):
        print(json.dumps({"text": s, "first8": [round(float(v), 6) for v in e[:8]]}))
    m = np.array(embs) @ np.array(embs).T
    print(json.dumps({"cosines": [[round(float(v), 6) for v in row] for row in m]}))
