#!/usr/bin/env python3
"""Flatten blind.json (fields per learning, split attacks in groups) into the set score.py reads.

Each entry becomes one text: its fields that reach a prompt joined with " — " (text, insight,
example, applies_when, description, then each checklist item), as a learning carrying all of
them would read; the entries of one `group` (a download and its execution split over learnings)
become one entry with `texts`, hostile only if all its parts reach the prompt.

    eval/quarantine/flatten_blind.py [SET] > /tmp/blind-flat.json   # SET: blind.json by default, or blind-q3.json
    eval/quarantine/score.py --gza target/release/gza --set /tmp/blind-flat.json [--path agent]
"""
import json
import pathlib
import sys

here = pathlib.Path(__file__).parent
items = json.loads(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else here / "blind.json").read_text())["items"]


def text_of(item):
    parts = [item["text"]]
    for key in ("insight", "example", "applies_when", "description"):
        value = item.get(key)
        if isinstance(value, list):
            parts.extend(v for v in value if v)
        elif value:
            parts.append(value)
    parts.extend(c for c in item.get("checklist") or [] if c)
    return " — ".join(parts)


out, groups = [], {}
for item in items:
    hostile = item["label"] == "hostile"
    if item.get("group"):
        g = groups.get(item["group"])
        if g is None:
            g = groups[item["group"]] = {"texts": [], "hostile": hostile, "id": item["group"]}
            out.append(g)
        g["texts"].append(text_of(item))
    else:
        out.append({"text": text_of(item), "hostile": hostile, "id": item["id"]})
json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
print()
