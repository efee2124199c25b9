#!/usr/bin/env python3
"""Validator for fresh5.jsonl. Usage: python3 validate_fresh5.py [-v]
-v prints every query next to the text of its answer lines (review dump)."""
import json, os, re, sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
WS = os.path.join(HERE, "workspace")
sys.path.insert(0, HERE)
from facts_fresh5 import FACTS  # hand-written slug -> [(file, substring)]

KEYS = ["id", "fact", "kind", "lang", "query", "split", "answers"]
AKEYS = ["path", "startLine", "endLine"]
KINDS = {"paraphrase", "question", "keyword", "typo", "other"}
OTHER_LANGS = {"fr", "de", "es", "zh", "ja"}
MIN_KIND = {"paraphrase": 120, "question": 100, "keyword": 60, "typo": 40, "other": 110}
MIN_LANG = {l: 15 for l in OTHER_LANGS}
MIN_TOTAL = 450
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uff00-\uffef]")

errors = []
def err(msg):
    errors.append(msg)

_files = {}
def file_lines(path):
    if path not in _files:
        full = os.path.normpath(os.path.join(WS, path))
        if not full.startswith(WS + os.sep) or not os.path.isfile(full):
            _files[path] = None
        else:
            with open(full, encoding="utf-8") as f:
                _files[path] = f.read().split("\n")
    return _files[path]

def relpath(key):
    return "MEMORY.md" if key == "M" else "memory/2026-%s-%s.md" % (key[:2], key[2:])

def main():
    verbose = "-v" in sys.argv
    rows = []
    with open(os.path.join(HERE, "fresh5.jsonl"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                err("line %d: blank line" % n); continue
            try:
                rows.append(json.loads(line))
            except ValueError as e:
                err("line %d: bad json: %s" % (n, e))
    ids, queries, slug_answers = set(), set(), {}
    kinds, langs = Counter(), Counter()
    per_file = Counter()
    for i, r in enumerate(rows, 1):
        rid = r.get("id", "?")
        if list(r.keys()) != KEYS:
            err("%s: keys/order %s" % (rid, list(r.keys())))
            continue
        if not re.fullmatch(r"f5-\d{3}", rid):
            err("%s: bad id format" % rid)
        if rid in ids:
            err("%s: duplicate id" % rid)
        ids.add(rid)
        if r["split"] != "fresh5":
            err("%s: split %r" % (rid, r["split"]))
        kind, lang, q, slug = r["kind"], r["lang"], r["query"], r["fact"]
        if kind not in KINDS:
            err("%s: kind %r" % (rid, kind))
        if not isinstance(q, str) or not q.strip() or q != q.strip():
            err("%s: empty or unstripped query" % rid)
        qn = re.sub(r"\s+", " ", q.strip().lower())
        if qn in queries:
            err("%s: duplicate query %r" % (rid, q))
        queries.add(qn)
        if kind == "other":
            if lang not in OTHER_LANGS:
                err("%s: other with lang %r" % (rid, lang))
        elif lang != "en":
            err("%s: kind %s must be en, got %r" % (rid, kind, lang))
        has_cjk = bool(CJK.search(q))
        if lang in ("zh", "ja") and not has_cjk:
            err("%s: %s query without CJK" % (rid, lang))
        if lang in ("en", "fr", "de", "es") and has_cjk:
            err("%s: %s query with CJK" % (rid, lang))
        if lang == "ja" and not re.search(r"[\u3040-\u30ff]", q):
            err("%s: ja query without kana" % rid)
        if kind in ("keyword", "typo") and not (2 <= len(q.split()) <= 4):
            err("%s: %s query must have 2-4 words: %r" % (rid, kind, q))
        if slug not in FACTS:
            err("%s: unknown fact slug %r" % (rid, slug)); continue
        ans = r["answers"]
        if not isinstance(ans, list) or not ans:
            err("%s: no answers" % rid); continue
        seen = set()
        for a in ans:
            if list(a.keys()) != AKEYS:
                err("%s: answer keys %s" % (rid, list(a.keys()))); continue
            p, s, e = a["path"], a["startLine"], a["endLine"]
            if not (isinstance(s, int) and isinstance(e, int) and 1 <= s <= e):
                err("%s: bad line range %r-%r" % (rid, s, e)); continue
            if (p, s, e) in seen:
                err("%s: duplicate answer %s:%d" % (rid, p, s))
            seen.add((p, s, e))
            lines = file_lines(p)
            if lines is None:
                err("%s: missing file %s" % (rid, p)); continue
            if e > len(lines):
                err("%s: %s has no line %d" % (rid, p, e)); continue
            for ln in range(s, e + 1):
                t = lines[ln - 1]
                if not t.strip():
                    err("%s: %s:%d is empty" % (rid, p, ln))
                if t.startswith("#"):
                    err("%s: %s:%d is a heading" % (rid, p, ln))
                if not t.startswith("- "):
                    err("%s: %s:%d is not a bullet" % (rid, p, ln))
            per_file[p] += 1
        # the answer lines must be exactly the lines that hold the fact's hand-written evidence
        expect = set()
        for key, sub in FACTS[slug]:
            p = relpath(key)
            lines = file_lines(p) or []
            hits = [k + 1 for k, t in enumerate(lines) if sub in t]
            if len(hits) != 1:
                err("%s: fact %s evidence %r matches %d lines in %s" % (rid, slug, sub, len(hits), p))
            else:
                expect.add((p, hits[0], hits[0]))
        if seen != expect:
            err("%s: answers %s differ from fact %s evidence %s" % (rid, sorted(seen), slug, sorted(expect)))
        key = tuple(sorted(seen))
        if slug in slug_answers and slug_answers[slug] != key:
            err("%s: fact %s has two different answer sets" % (rid, slug))
        slug_answers[slug] = key
        kinds[kind] += 1
        langs[lang] += 1
        if verbose:
            print("%s [%s/%s] %s :: %s" % (rid, kind, lang, slug, q))
            for a in ans:
                print("      %s:%d  %s" % (a["path"], a["startLine"], file_lines(a["path"])[a["startLine"] - 1]))
    # sequential ids
    exp_ids = ["f5-%03d" % k for k in range(1, len(rows) + 1)]
    if [r.get("id") for r in rows] != exp_ids:
        err("ids are not sequential f5-001..")
    if len(rows) < MIN_TOTAL:
        err("total %d < %d" % (len(rows), MIN_TOTAL))
    for k, m in MIN_KIND.items():
        if kinds[k] < m:
            err("kind %s: %d < %d" % (k, kinds[k], m))
    for l, m in MIN_LANG.items():
        if langs[l] < m:
            err("lang %s: %d < %d" % (l, langs[l], m))
    multi = sum(1 for r in rows if len(r.get("answers", [])) > 1)
    print("queries %d, facts %d, multi-answer %d" % (len(rows), len(slug_answers), multi))
    print("kinds", dict(sorted(kinds.items())))
    print("langs", dict(sorted(langs.items())))
    if verbose:
        for p, c in sorted(per_file.items()):
            print("  %-24s %d" % (p, c))
    if errors:
        for e in errors[:200]:
            print("ERROR", e)
        print("FAIL (%d errors)" % len(errors))
        sys.exit(1)
    print("OK")

if __name__ == "__main__":
    main()
