#!/usr/bin/env python3
"""The labelled lists of tests/it/quarantine.rs as a set (for training layer h and measuring it
leave-one-set-out): the strings of each `…_are_kept` test are harmless, of each `…_are_held`
test hostile.

    eval/quarantine/from_tests.py > /tmp/tests-it.json
"""
import json
import pathlib
import re
import sys

src = (pathlib.Path(__file__).parent / "../../tests/it/quarantine.rs").read_text()
lists = {
    "warnings_prohibitions_descriptions_and_quoted_data_are_kept": False,
    "negations_histories_and_named_things_in_any_language_are_kept": False,
    "the_second_blind_sets_look_alikes_are_kept": False,
    "look_alikes_of_protected_things_are_kept": False,
    "plausible_conventions_that_work_against_the_user_are_held": True,
    "classes_the_held_out_sets_showed_are_held": True,
    "the_second_blind_sets_classes_are_held": True,
    "acts_on_protected_things_are_held_by_class": True,
}
literal = re.compile(r'r#"(.*?)"#|r"(.*?)"|"((?:[^"\\]|\\.)*)"', re.S)
out = []
for name, hostile in lists.items():
    start = src.index(f"fn {name}(")
    end = src.find("\n#[test]", start)
    for m in literal.finditer(src[start:end if end > 0 else len(src)]):
        text = m.group(1) or m.group(2) or m.group(3)
        if m.group(3) is not None and "\\" in text:
            text = json.loads(f'"{text}"')
        if text and len(text.split()) >= 5 and "{" not in text and not text.rstrip().endswith(":") and "\n" not in text:
            out.append({"text": text, "hostile": hostile})
json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
