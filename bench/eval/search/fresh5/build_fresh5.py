#!/usr/bin/env python3
"""Builds fresh5.jsonl from the hand-written fact table (facts_fresh5.py) and the
hand-written queries (queries_a..d.py). Line numbers are resolved from unique substrings."""
import json, os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from facts_fresh5 import FACTS
from resolve_fresh5 import resolve
from queries_a import QA
from queries_b import QB
from queries_c import QC
from queries_d import QD

KIND = {"P": "paraphrase", "Q": "question", "K": "keyword", "T": "typo"}

def main():
    rows = []
    n = 0
    for part in (QA, QB, QC, QD):
        for slug, qs in part.items():
            ans = [{"path": p, "startLine": l, "endLine": l} for p, l in resolve(slug)]
            for code, q in qs:
                n += 1
                kind = KIND.get(code, "other")
                lang = "en" if code in KIND else code
                rows.append({"id": "f5-%03d" % n, "fact": slug, "kind": kind, "lang": lang,
                             "query": q, "split": "fresh5", "answers": ans})
    with open(os.path.join(HERE, "fresh5.jsonl"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print("wrote", len(rows), "queries")

if __name__ == "__main__":
    main()
