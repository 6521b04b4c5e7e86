#!/usr/bin/env python3
"""Long task prompts: does reading the whole prompt by sentences beat embedding its start?

gza embeds a query's first 96 tokens (rank.rs QUERY_TOKENS) and takes BM25 over its terms. A
pasted issue often says what it is about only in its stack trace or its last acceptance
criterion. The rules compared here were fixed before the long-prompt set was looked at, and
none is tuned on it (gza's constants throughout, loso.py's MAIN):

  main      the cosine of the prompt's first 96 tokens (what gza does)
  max       the larger of that and the best sentence's cosine
  mix       half the first 96 tokens', half the best sentence's

    target/release/examples/rank_dump MODEL_DIR SET.json > DUMP.json     # per set
    eval/long_prompts.py SET.json:DUMP.json [...]

Python 3.11 standard library only; scoring as loso.py (dot products of the dump's vectors,
gza's BM25, gza's cut).
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(__file__))
from loso import MAIN, cut, fmt  # noqa: E402
from score import metrics  # noqa: E402
from tune import prepare  # noqa: E402

RULES = {
    "main": lambda full, sent: full,
    "max": lambda full, sent: max([full] + sent),
    "mix": lambda full, sent: 0.5 * full + 0.5 * max(sent) if sent else full,
}


def run(data, keys, rows, rule):
    _, lexw, floor, centred, rel, clear = MAIN
    returned = {}
    for q in data["queries"]:
        r = rows[q["id"]]
        scored = []
        for i, k in enumerate(keys):
            sem = RULES[rule](r["full"][i], [s[i] for s in r["sent"]])
            scored.append((sem + lexw * min(r["lex"][i] / 12.0, 1.0), k))
        scored.sort(key=lambda x: -x[0])
        returned[q["id"]] = cut(scored, floor, centred, rel, clear)
    return metrics(data, returned)


def main():
    for pair in sys.argv[1:]:
        path, dump = pair.rsplit(":", 1)
        data = json.load(open(path))
        keys, rows = prepare(data, json.load(open(dump)))
        words = [len(q["prompt"].split()) for q in data["queries"]]
        print(f"{path}: {len(data['queries'])} prompts, {min(words)}-{max(words)} words "
              f"(mean {sum(words) / len(words):.0f})")
        for rule in RULES:
            print(f"  {rule:<5} {fmt(run(data, keys, rows, rule))}")


if __name__ == "__main__":
    main()
