#!/usr/bin/env python3
"""Turn a BERT sentence model shipped only as ONNX (fp32) into the folder gza-embed and
eval/redump.py read: model.safetensors in PyTorch's names and layout, beside a config.json,
vocab.txt and pooling settings the caller names.

    python3 -m venv /tmp/onnx && /tmp/onnx/bin/pip install onnx numpy
    /tmp/onnx/bin/python eval/onnx-to-folder.py MODEL.onnx OUT_DIR --like DIR \\
        [--layers N] [--max-tokens N]

ONNX exports keep the biases' and LayerNorms' names but turn each Linear weight into an
anonymous MatMul initializer (`onnx::MatMul_470`, stored [in, out]); each is named here after
the bias of the Add that consumes the MatMul's output, and transposed. --like DIR gives
config.json, vocab.txt, tokenizer_config.json and 1_Pooling/config.json (a model of the same
family: paraphrase-MiniLM-L3-v2 takes all-MiniLM-L6-v2's, with --layers 3); the tensors'
shapes are checked against the config. Quantized (int8) exports are refused: dequantizing
them would measure another model.
"""
import argparse, json, os, re, shutil, struct
import numpy as np
import onnx
from onnx import numpy_helper


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("onnx")
    ap.add_argument("out")
    ap.add_argument("--like", required=True, help="a model folder of the same family")
    ap.add_argument("--layers", type=int, help="num_hidden_layers, when it differs from --like's")
    ap.add_argument("--max-tokens", type=int, help="sentence_bert_config.json's max_seq_length")
    a = ap.parse_args()

    m = onnx.load(a.onnx)
    init = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    if any(n.op_type in ("MatMulInteger", "DynamicQuantizeLinear", "QLinearMatMul") for n in m.graph.node):
        raise SystemExit("error: a quantized ONNX model; only fp32 exports are converted")
    consumers = {}
    for n in m.graph.node:
        for x in n.input:
            consumers.setdefault(x, []).append(n)
    strip = lambda name: re.sub(r"^.*?(?=(embeddings|encoder)\.)", "", name, count=1)
    tensors = {}
    for name, v in init.items():
        if name.endswith((".weight", ".bias")) and ("embeddings." in name or "encoder." in name):
            tensors[strip(name)] = v
    for n in m.graph.node:
        if n.op_type != "MatMul":
            continue
        weight = next((x for x in n.input if x in init and init[x].ndim == 2), None)
        if weight is None:
            continue  # attention's q·kᵀ and p·v
        adds = [c for c in consumers.get(n.output[0], []) if c.op_type == "Add"]
        bias = [x for c in adds for x in c.input if x in init and x.endswith(".bias")]
        if len(bias) != 1:
            raise SystemExit(f"error: cannot name the MatMul weight {weight}: no single bias follows it")
        tensors[strip(bias[0])[: -len(".bias")] + ".weight"] = np.ascontiguousarray(init[weight].T)

    cfg = json.load(open(os.path.join(a.like, "config.json")))
    if a.layers:
        cfg["num_hidden_layers"] = a.layers
    h, i = cfg["hidden_size"], cfg["intermediate_size"]
    want = {"embeddings.word_embeddings.weight": [cfg["vocab_size"], h]}
    for l in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{l}"
        for part in ("attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense"):
            want[f"{p}.{part}.weight"] = [h, h]
        want[f"{p}.intermediate.dense.weight"] = [i, h]
        want[f"{p}.output.dense.weight"] = [h, i]
    for name, shape in want.items():
        got = list(tensors[name].shape) if name in tensors else None
        if got != shape:
            raise SystemExit(f"error: {name} is {got}, config.json says {shape}")
    extra = [k for k in tensors if k.startswith("encoder.layer.")
             and int(k.split(".")[2]) >= cfg["num_hidden_layers"]]
    if extra:
        raise SystemExit(f"error: the ONNX model has more layers than {cfg['num_hidden_layers']} ({extra[0]})")

    os.makedirs(os.path.join(a.out, "1_Pooling"), exist_ok=True)
    header, blobs, off = {}, [], 0
    for k in sorted(tensors):
        b = tensors[k].astype(np.float32).tobytes()
        header[k] = {"dtype": "F32", "shape": list(tensors[k].shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    with open(os.path.join(a.out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for b in blobs:
            f.write(b)
    json.dump(cfg, open(os.path.join(a.out, "config.json"), "w"), indent=2)
    for name in ("vocab.txt", "tokenizer_config.json", "1_Pooling/config.json"):
        if os.path.exists(os.path.join(a.like, name)):
            shutil.copy(os.path.join(a.like, name), os.path.join(a.out, name))
    st = {"do_lower_case": False}
    if a.max_tokens:
        st["max_seq_length"] = a.max_tokens
    json.dump(st, open(os.path.join(a.out, "sentence_bert_config.json"), "w"))
    print(f"wrote {len(tensors)} tensors to {a.out}")


if __name__ == "__main__":
    main()
