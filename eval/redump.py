#!/usr/bin/env python3
"""What another sentence model would rank: re-embed a rank_dump's learnings and prompts with a
model gza cannot load yet, keeping the dump's words, so eval/loso.py can score it offline.

    target/debug/examples/rank_dump MINILM_DIR SET.json > /tmp/set.dump.json
    OPENBLAS_NUM_THREADS=1 eval/redump.py MODEL_DIR SET.json /tmp/set.dump.json > /tmp/set.other.json
    eval/loso.py SET.json:/tmp/set.other.json ... [--diagnose]

MODEL_DIR is a sentence-transformers folder (config.json, vocab.txt, model.safetensors,
1_Pooling/config.json) of a BERT model (MiniLM, bge, gte, e5, arctic-embed) or an MPNet one
(all-mpnet-base-v2: relative position buckets, positions from 2, <s> … </s>). Pooling comes
from 1_Pooling/config.json (mean or CLS); --query-prefix / --passage-prefix add e5's "query: "
and "passage: " or bge's query instruction. The forward pass and tokenizer are
scripts/reference-embed.py's (numpy, float32 here for speed); a prompt is cut at 96 tokens as
gza's query is. Checked against gza: with all-MiniLM-L6-v2 every vector of the Fieldline set
has cosine ≥ 0.9993 with rank_dump's (int8 layers). Needs numpy; about 0.3 s a text for a
12-layer 768-wide model on one core.
"""
import argparse, importlib.util, json, math, os, sys
import numpy as np

_spec = importlib.util.spec_from_file_location(
    "reference_embed", os.path.join(os.path.dirname(__file__), "..", "scripts", "reference-embed.py"))
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)


def erf(x):
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), vectorised: math.erf per element is slow.
    a = np.abs(x).astype(np.float64)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
               + 0.254829592) * t * np.exp(-a * a)
    return (np.sign(x) * y).astype(np.float32)


class Model:
    def __init__(self, d):
        self.cfg = json.load(open(f"{d}/config.json"))
        w = {k.removeprefix("bert."): v for k, v in ref.load(f"{d}/model.safetensors").items()}
        self.w = {k: v.astype(np.float32) for k, v in w.items() if v.dtype != np.int64}
        self.mpnet = self.cfg.get("model_type") == "mpnet"
        lines = open(f"{d}/vocab.txt", encoding="utf-8").read().split("\n")
        self.vocab = {t: i for i, t in enumerate(lines) if t}
        self.max = 512
        if os.path.exists(f"{d}/sentence_bert_config.json"):
            self.max = json.load(open(f"{d}/sentence_bert_config.json")).get("max_seq_length", 512)
        pooling = {}
        if os.path.exists(f"{d}/1_Pooling/config.json"):
            pooling = json.load(open(f"{d}/1_Pooling/config.json"))
        self.cls = bool(pooling.get("pooling_mode_cls_token"))
        self.lowercase = json.load(open(f"{d}/tokenizer_config.json")).get("do_lower_case", True) \
            if os.path.exists(f"{d}/tokenizer_config.json") else True
        self.t = {}

    def ids(self, text, limit):
        first, last = ("<s>", "</s>") if self.mpnet else ("[CLS]", "[SEP]")
        pieces = []
        # reference-embed's basic_tokens lowercases; every model here is uncased.
        assert self.lowercase, "cased models are not handled"
        for t in ref.basic_tokens(text):
            pieces += ref.wordpiece(t, self.vocab)
        toks = [first] + pieces[: min(limit, self.max) - 2] + [last]
        return [self.vocab[t] for t in toks]

    def embed(self, text, limit=10**9):
        w, cfg = self.w, self.cfg
        ids = self.ids(text, limit)
        n, h, heads = len(ids), cfg["hidden_size"], cfg["num_attention_heads"]
        eps, d = cfg.get("layer_norm_eps", 1e-12), h // cfg["num_attention_heads"]

        def ln(x, name):
            m = x.mean(-1, keepdims=True)
            v = ((x - m) ** 2).mean(-1, keepdims=True)
            return (x - m) / np.sqrt(v + eps) * w[name + ".weight"] + w[name + ".bias"]

        def lin(x, name):
            if name not in self.t:
                self.t[name] = np.ascontiguousarray(w[name + ".weight"].T)
            return x @ self.t[name] + w[name + ".bias"]

        x = w["embeddings.word_embeddings.weight"][ids]
        bias = 0.0
        if self.mpnet:
            # Positions count from padding_idx + 1; attention gets T5-style relative buckets.
            pad = cfg["pad_token_id"]
            x = x + w["embeddings.position_embeddings.weight"][pad + 1: pad + 1 + n]
            rel = np.arange(n)[None, :] - np.arange(n)[:, None]
            nb = cfg.get("relative_attention_num_buckets", 32) // 2
            m = -rel
            bucket = (m < 0).astype(np.int64) * nb
            m = np.abs(m)
            exact = nb // 2
            large = exact + (np.log(np.maximum(m, 1) / exact) / math.log(128 / exact)
                             * (nb - exact)).astype(np.int64)
            bucket += np.where(m < exact, m, np.minimum(large, nb - 1))
            bias = w["encoder.relative_attention_bias.weight"][bucket].transpose(2, 0, 1)
        else:
            x = x + w["embeddings.position_embeddings.weight"][:n] \
                + w["embeddings.token_type_embeddings.weight"][0]
        x = ln(x, "embeddings.LayerNorm")
        for l in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{l}"
            if self.mpnet:
                qkv = [f"{p}.attention.attn.{c}" for c in "qkv"]
                out, norm = f"{p}.attention.attn.o", f"{p}.attention.LayerNorm"
            else:
                qkv = [f"{p}.attention.self.{c}" for c in ("query", "key", "value")]
                out, norm = f"{p}.attention.output.dense", f"{p}.attention.output.LayerNorm"
            q, k, v = (lin(x, nm).reshape(n, heads, d).transpose(1, 0, 2) for nm in qkv)
            sc = q @ k.transpose(0, 2, 1) / np.sqrt(d) + bias
            sc = np.exp(sc - sc.max(-1, keepdims=True))
            sc /= sc.sum(-1, keepdims=True)
            x = ln(x + lin((sc @ v).transpose(1, 0, 2).reshape(n, h), out), norm)
            up = lin(x, f"{p}.intermediate.dense")
            x = ln(x + lin(0.5 * up * (1 + erf(up / math.sqrt(2))), f"{p}.output.dense"),
                   f"{p}.output.LayerNorm")
        e = x[0] if self.cls else x.mean(0)
        return e / np.linalg.norm(e)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("set")
    ap.add_argument("dump")
    ap.add_argument("--query-prefix", default="")
    ap.add_argument("--passage-prefix", default="")
    a = ap.parse_args()
    m = Model(a.model)
    r = lambda v: [round(float(x), 5) for x in v]
    data, dump = json.load(open(a.set)), json.load(open(a.dump))
    texts = {l["key"]: l["text"] for l in data["learnings"]}
    prompts = {q["id"]: q["prompt"] for q in data["queries"]}
    for l in dump["learnings"]:
        l["vec"] = r(m.embed(a.passage_prefix + texts[l["key"]]))
        l["vec_when"] = None  # hints are not re-embedded: score without --when
    for q in dump["queries"]:
        q["vec"] = r(m.embed(a.query_prefix + prompts[q["id"]], 96))
        q["sentence_vecs"] = [r(m.embed(a.query_prefix + s)) for s in q["sentences"]]
    dump["model"] = os.path.basename(os.path.normpath(a.model))
    json.dump(dump, sys.stdout)


if __name__ == "__main__":
    main()
