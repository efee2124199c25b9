#!/usr/bin/env python3
"""Validate fresh4.jsonl against workspace/. Use -v to print each query with its answer lines."""

import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WS = os.path.join(HERE, "workspace")
MIN_KIND = {"paraphrase": 110, "question": 60, "keyword": 40, "typo": 30, "other": 60}
OTHER_LANGS = {"fr", "de", "es", "zh", "ja"}
MIN_OTHER_LANG = 10
MIN_TOTAL = 300
KEYS = ["id", "fact", "kind", "lang", "query", "split", "answers"]


def main():
    verbose = "-v" in sys.argv
    errs = []
    cache = {}

    def lines(p):
        if p not in cache:
            full = os.path.join(WS, p)
            if os.path.isfile(full):
                with open(full, encoding="utf-8") as fh:
                    cache[p] = fh.read().split("\n")
            else:
                cache[p] = None
        return cache[p]

    with open(os.path.join(HERE, "fresh4.jsonl"), encoding="utf-8") as fh:
        rows = [json.loads(row) for row in fh if row.strip()]
    ids, queries = set(), set()
    kinds, langs = collections.Counter(), collections.Counter()
    fact_answers = {}
    for o in rows:
        tag = o.get("id", "?")
        if list(o.keys()) != KEYS:
            errs.append(f"{tag}: keys {list(o.keys())}")
        if not re.fullmatch(r"f4-\d{3}", o["id"]):
            errs.append(f"{tag}: bad id")
        if o["id"] in ids:
            errs.append(f"{tag}: duplicate id")
        ids.add(o["id"])
        qn = " ".join(o["query"].lower().split())
        if qn in queries:
            errs.append(f"{tag}: duplicate query {o['query']!r}")
        queries.add(qn)
        if o["split"] != "fresh4":
            errs.append(f"{tag}: split")
        if o["kind"] not in MIN_KIND:
            errs.append(f"{tag}: kind {o['kind']}")
        if o["kind"] == "other":
            if o["lang"] not in OTHER_LANGS:
                errs.append(f"{tag}: other with lang {o['lang']}")
        elif o["lang"] != "en":
            errs.append(f"{tag}: {o['kind']} with lang {o['lang']}")
        if o["kind"] in ("keyword", "typo"):
            n = len(o["query"].split())
            if not 2 <= n <= 4:
                errs.append(f"{tag}: {o['kind']} has {n} words")
        if o["lang"] == "en" and re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", o["query"]):
            errs.append(f"{tag}: CJK in en query")
        if o["lang"] in ("zh", "ja") and not re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", o["query"]):
            errs.append(f"{tag}: no CJK in {o['lang']} query")
        kinds[o["kind"]] += 1
        langs[o["lang"]] += 1
        if not o["answers"]:
            errs.append(f"{tag}: no answers")
        seen = set()
        for a in o["answers"]:
            key = (a["path"], a["startLine"], a["endLine"])
            if key in seen:
                errs.append(f"{tag}: duplicate answer {key}")
            seen.add(key)
            if not (
                a["path"] == "MEMORY.md" or re.fullmatch(r"memory/2026-10-\d\d\.md", a["path"])
            ):
                errs.append(f"{tag}: bad path {a['path']}")
            L = lines(a["path"])
            if L is None:
                errs.append(f"{tag}: missing file {a['path']}")
                continue
            if not (1 <= a["startLine"] <= a["endLine"] <= len(L)):
                errs.append(f"{tag}: line out of range {key}")
                continue
            for n in range(a["startLine"], a["endLine"] + 1):
                t = L[n - 1].strip()
                if not t:
                    errs.append(f"{tag}: empty line {a['path']}:{n}")
                elif t.startswith("#"):
                    errs.append(f"{tag}: heading line {a['path']}:{n}")
                elif not t.startswith("- "):
                    errs.append(f"{tag}: not a bullet {a['path']}:{n}")
        # same fact slug must always have the same answer set
        fs = frozenset(seen)
        if o["fact"] in fact_answers and fact_answers[o["fact"]] != fs:
            errs.append(f"{tag}: fact {o['fact']} has differing answers")
        fact_answers.setdefault(o["fact"], fs)
        if verbose:
            print(f"\n[{o['id']}] {o['kind']}/{o['lang']} {o['fact']}\n  Q: {o['query']}")
            for a in o["answers"]:
                L = lines(a["path"]) or []
                for n in range(a["startLine"], a["endLine"] + 1):
                    print(f"  A {a['path']}:{n}: {L[n - 1] if n <= len(L) else '??'}")
    for k, m in MIN_KIND.items():
        if kinds[k] < m:
            errs.append(f"kind {k}: {kinds[k]} < {m}")
    for lang in OTHER_LANGS:
        if langs[lang] < MIN_OTHER_LANG:
            errs.append(f"lang {lang}: {langs[lang]} < {MIN_OTHER_LANG}")
    if len(rows) < MIN_TOTAL:
        errs.append(f"total {len(rows)} < {MIN_TOTAL}")
    # every bullet-line coverage report (informational)
    print(
        f"\nqueries {len(rows)}  facts {len(fact_answers)}  kinds {dict(kinds)}  "
        f"langs {dict(langs)}"
    )
    multi = sum(1 for o in rows if len(o["answers"]) > 1)
    print(f"multi-answer queries {multi}")
    for e in errs:
        print("ERROR", e)
    print("OK" if not errs else f"FAILED ({len(errs)} errors)")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
