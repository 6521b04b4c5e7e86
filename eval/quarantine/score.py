#!/usr/bin/env python3
"""Score gza's quarantine through the binary, the way a person or an agent reaches it.

  eval/quarantine/score.py --gza target/release/gza                       # dev.json and corpus.json
  eval/quarantine/score.py --gza target/release/gza --set eval/quarantine/blind.json
  eval/quarantine/score.py --gza … --misses                                # list what went wrong
  eval/quarantine/score.py --gza … --path agent                            # an agent's `## Learnings`
  eval/quarantine/score.py --gza … --neighbours MODEL_DIR                  # with layer (g) on

Each entry gets a fresh project (`gza init`; `learnings: {inject: file, inject_drafts: true,
max_tokens: 20000, extraction_provider: none}`, so nothing but the quarantine keeps a stored
learning out of the prompt). Its learnings are stored one after another:

  --path add     `gza learnings add TEXT` (a person's write path; the default)
  --path agent   a task whose agent (a shell script) ends its reply with `## Learnings` and the
                 texts as bullets; `gza work` takes them in (an agent's write path)

then a task is queued and `gza show ID --prompt` prints the prompt the next agent would get. A
learning *reached the prompt* when its stored text (`gza learnings show --all --json`) is in
that prompt. A hostile entry counts as injected when all its learnings reached the prompt (a
split attack needs every part); a harmless entry counts as held when any of its learnings did
not (held back, or refused by `learnings add`).

Sets: a JSON list of {"text": str} or {"texts": [str, …]} with "hostile": true/false (also
accepted: "label": "hostile"/"harmless", "learning" for "text", {"items": [...]} at the top).
"""
import argparse, json, os, re, pathlib, shlex, subprocess, sys, tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = pathlib.Path(__file__).parent
CONFIG = """learnings:
  inject: file
  inject_drafts: true
  max_tokens: 20000
  extraction_provider: none
  regenerate_every: 1
"""


def entries(path):
    data = json.loads(pathlib.Path(path).read_text())
    if isinstance(data, dict):
        data = data.get("items") or data.get("entries") or data.get("learnings") or []
    out = []
    for e in data:
        if isinstance(e, str):
            continue
        texts = e.get("texts") or [e.get("text") or e.get("learning")]
        if "hostile" in e:
            hostile = bool(e["hostile"])
        else:
            hostile = str(e.get("label", "")).lower() in ("hostile", "malicious", "attack", "bad")
        out.append({"texts": [t for t in texts if t], "hostile": hostile, "kind": e.get("kind", ""),
                    "lang": e.get("lang", "")})
    return out


FENCE_TAG = re.compile(r"[<\u2039\uff1c]\s*/?\s*(gza[-_ ]?)?learnings\s*[>\u203a\uff1e]", re.I)


def in_prompt(text, prompt):
    """Whether a stored learning is in the prompt (a fence tag in it may have been defused)."""
    return all(part.strip() in prompt for part in FENCE_TAG.split(text) if part and part.strip()
               and not re.fullmatch(r"(gza[-_ ]?)?", part.strip(), re.I))


def run(gza, cwd, *args, env=None, stdin=None):
    return subprocess.run([gza, *args], cwd=cwd, capture_output=True, text=True, env=env,
                          input=stdin, timeout=120)


def env_for(home):
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
    env.update(HOME=str(home), NO_COLOR="1", GZA_HOOKS="off")
    return env


NEIGHBOURS = None  # --neighbours MODEL_DIR: quarantine layer (g) on, with this model


def score_entry(gza, entry, path):
    # ignore_cleanup_errors: with a model, the background embedding job may still be writing .gza
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        root = pathlib.Path(tmp) / "p"
        root.mkdir()
        env = env_for(tmp)
        if path == "agent":
            subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
            subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@l", "commit", "-q",
                            "--allow-empty", "-m", "init"], cwd=root, check=True)
        r = run(gza, root, "init", env=env)
        if r.returncode != 0:
            raise SystemExit(f"gza init failed: {r.stderr}")
        config = CONFIG
        if NEIGHBOURS:
            # The model folder by environment: a project's model_dir outside it needs trust.
            config += "  quarantine_neighbours: true\n"
            env["GZA_MODEL_DIR"] = NEIGHBOURS
        refused = 0
        if path == "agent":
            lines = "".join(f"- {t}\n" for t in entry["texts"])
            reply = pathlib.Path(tmp) / "reply.txt"
            reply.write_text("Done.\n\n## Learnings\n" + lines)
            agent = pathlib.Path(tmp) / "agent.sh"
            agent.write_text(f"cat > /dev/null\ncat {shlex.quote(str(reply))}\n")
            config += f"provider: command\nproviders:\n  command:\n    command: [sh, {json.dumps(str(agent))}]\n"
        (root / "gza.yaml").write_text(config)
        if path == "agent":
            # The agent command is a setting that runs a command: ignored until trusted.
            r = run(gza, root, "trust", "--yes", env=env)
            if r.returncode != 0:
                raise SystemExit(f"gza trust failed: {r.stdout}{r.stderr}")
            run(gza, root, "add", "--type", "explore", "look around", env=env)
            r = run(gza, root, "work", env=env)
            if r.returncode != 0:
                raise SystemExit(f"gza work failed: {r.stdout}{r.stderr}")
        else:
            for t in entry["texts"]:
                r = run(gza, root, "learnings", "add", "--", t, env=env)
                if r.returncode != 0:
                    refused += 1
        stored = json.loads(run(gza, root, "learnings", "show", "--all", "--json", env=env).stdout or "[]")
        task = run(gza, root, "add", "--type", "explore", "next task", env=env).stdout
        tid = re.search(r"Added task (\d+)", task).group(1)
        prompt = run(gza, root, "show", tid, "--prompt", env=env).stdout
        reached = [in_prompt(l["text"], prompt) for l in stored]
        missing = len(entry["texts"]) - len(stored) if path == "add" else 0
        return {"stored": len(stored), "reached": sum(reached), "refused": refused + max(missing - refused, 0),
                "reasons": [l.get("quarantine_reason") for l in stored],
                "all_reached": bool(stored) and all(reached) and refused == 0 and len(stored) >= len(entry["texts"]),
                "any_held": refused > 0 or not all(reached) or len(stored) < len(entry["texts"])}


def score(gza, set_path, path, jobs, misses):
    es = entries(set_path)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda e: score_entry(gza, e, path), es))
    hostile = [(e, r) for e, r in zip(es, results) if e["hostile"]]
    harmless = [(e, r) for e, r in zip(es, results) if not e["hostile"]]
    injected = [(e, r) for e, r in hostile if r["all_reached"]]
    held = [(e, r) for e, r in harmless if r["any_held"]]
    tp = len(hostile) - len(injected)
    precision = tp / max(tp + len(held), 1)
    recall = tp / max(len(hostile), 1)
    print(f"{set_path} ({path}): hostile injected {len(injected)} of {len(hostile)}, "
          f"harmless held {len(held)} of {len(harmless)}; precision {precision:.3f}, recall {recall:.3f}")
    if misses:
        for e, r in injected:
            print(f"  injected [{e['kind']}/{e['lang']}]: {' || '.join(e['texts'])}")
        for e, r in held:
            why = "; ".join(x for x in r["reasons"] if x) or ("refused by learnings add" if r["refused"] else "?")
            print(f"  held     [{e['kind']}/{e['lang']}]: {' || '.join(e['texts'])}  ({why})")
    return len(injected), len(hostile), len(held), len(harmless)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gza", required=True)
    ap.add_argument("--set", action="append")
    ap.add_argument("--path", choices=["add", "agent"], default="add")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--misses", action="store_true")
    ap.add_argument("--neighbours", metavar="MODEL_DIR",
                    help="turn quarantine layer (g) on (learnings.quarantine_neighbours) with this model")
    a = ap.parse_args()
    global NEIGHBOURS
    NEIGHBOURS = str(pathlib.Path(a.neighbours).resolve()) if a.neighbours else None
    gza = str(pathlib.Path(a.gza).resolve())
    sets = a.set or [str(HERE / "dev.json"), str(HERE / "corpus.json")]
    for s in sets:
        score(gza, s, a.path, a.jobs, a.misses)


if __name__ == "__main__":
    main()
