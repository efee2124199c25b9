"""Validate every split of the judge pair set and print counts per category per split.

    python bench/eval/judge/check.py

Checks the schema, unique ids, label/category consistency, dates (b is never older than a;
conflicts share one date), the pinned rule, scopes (they differ only in ``cross-scope``),
that every detail token and question answer occurs in the entry texts it must survive in,
the translation language mix, the minimum sizes, and that no entry text is shared between
two splits. Exits 1 on any error.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import SPLITS, load

LABELS = ("same", "supersedes", "conflict", "related", "unrelated")
TYPES = (
    "decision",
    "convention",
    "preference",
    "fact",
    "session_state",
    "compact_summary",
    "task_learning",
    "unknown",
)
#: category -> labels it may carry
CATEGORIES: dict[str, tuple[str, ...]] = {
    "paraphrase": ("same",),
    "light-edit": ("same",),
    "abbreviation": ("same",),
    "detail-split": ("same",),
    "translation": ("same",),
    "cross-type": ("same",),
    "changed-decision": ("supersedes",),
    "version-upgrade": ("supersedes",),
    "moved-value": ("supersedes",),
    "counts-in-words": ("same", "supersedes", "conflict"),
    "conflict": ("conflict",),
    "qualifier-near-miss": ("related",),
    "same-subject-different-fact": ("related",),
    "pinned-contradiction": ("supersedes",),
    "unrelated": ("unrelated",),
    "cross-scope": ("same",),
}
MIN_PER_SPLIT = 260
MIN_PER_CATEGORY = 15
MIN_OVERRIDE = {"translation": 20, "qualifier-near-miss": 30}
LANGS = ("fr", "de", "es", "zh", "ja")
MIN_EN_PAIRS_PER_LANG = 4
ID_PREFIX = {"tune": "t", "holdout": "h", "fresh": "g", "fresh2": "n"}

SCOPE_RE = re.compile(r"^(global|project:[a-z0-9][a-z0-9-]*|session:[A-Za-z0-9][A-Za-z0-9-]*)$")
LANG_NOTE_RE = re.compile(r"^([a-z]{2})/([a-z]{2})\b")
ENTRY_KEYS = {"text", "type", "scope", "created", "pinned"}
TOP_KEYS = {"id", "a", "b", "label", "category", "details", "question", "note"}
OPTIONAL_KEYS = {"question_b"}


def _has(text: str, token: str) -> bool:
    return token.casefold() in text.casefold()


def _entry_errors(e: object, side: str) -> list[str]:
    if not isinstance(e, dict):
        return [f"{side} is not an object"]
    errs = []
    if set(e) != ENTRY_KEYS:
        errs.append(f"{side} keys {sorted(e)} != {sorted(ENTRY_KEYS)}")
        return errs
    if not isinstance(e["text"], str) or not e["text"].strip():
        errs.append(f"{side}.text empty")
    if e["type"] not in TYPES:
        errs.append(f"{side}.type {e['type']!r} unknown")
    if not isinstance(e["scope"], str) or not SCOPE_RE.match(e["scope"]):
        errs.append(f"{side}.scope {e['scope']!r} malformed")
    try:
        date.fromisoformat(e["created"])
    except (TypeError, ValueError):
        errs.append(f"{side}.created {e['created']!r} is not YYYY-MM-DD")
    if not isinstance(e["pinned"], bool):
        errs.append(f"{side}.pinned is not a bool")
    return errs


def _question_errors(q: object, name: str) -> list[str]:
    if not isinstance(q, dict) or set(q) != {"q", "answer"}:
        return [f"{name} must be {{'q', 'answer'}}"]
    if not all(isinstance(q[k], str) and q[k].strip() for k in ("q", "answer")):
        return [f"{name} has an empty q or answer"]
    return []


def check_row(r: dict, split: str) -> list[str]:
    """Errors of one pair (empty when it is valid)."""
    errs: list[str] = []
    keys = set(r)
    if not keys >= TOP_KEYS or keys - TOP_KEYS - OPTIONAL_KEYS:
        return [f"keys {sorted(keys)}: need {sorted(TOP_KEYS)} (+ optional question_b)"]
    if not re.fullmatch(rf"{ID_PREFIX[split]}-\d{{3,}}", str(r["id"])):
        errs.append(f"id {r['id']!r} should look like {ID_PREFIX[split]}-001")
    errs += _entry_errors(r["a"], "a") + _entry_errors(r["b"], "b")
    errs += _question_errors(r["question"], "question")
    if "question_b" in r:
        errs += _question_errors(r["question_b"], "question_b")
    if errs:
        return errs
    a, b, label, cat = r["a"], r["b"], r["label"], r["category"]
    if label not in LABELS:
        return [f"label {label!r} unknown"]
    if cat not in CATEGORIES:
        return [f"category {cat!r} unknown"]
    if label not in CATEGORIES[cat]:
        errs.append(f"category {cat} cannot carry label {label}")
    if not isinstance(r["note"], str) or not r["note"].strip():
        errs.append("note empty")

    da, db = date.fromisoformat(a["created"]), date.fromisoformat(b["created"])
    if db < da:
        errs.append("b.created is older than a.created (a is the older entry)")
    if label == "conflict" and da != db:
        errs.append("conflict pairs carry one shared created date")
    if a["pinned"] and label == "supersedes" and cat != "pinned-contradiction":
        errs.append("a pinned older entry that is superseded belongs in pinned-contradiction")
    if cat == "pinned-contradiction" and not a["pinned"]:
        errs.append("pinned-contradiction needs a.pinned = true")
    if cat == "cross-scope":
        if a["scope"] == b["scope"]:
            errs.append("cross-scope pair has one scope")
        if a["text"] != b["text"]:
            errs.append("cross-scope pair texts must be identical")
    elif a["scope"] != b["scope"]:
        errs.append("scopes differ outside cross-scope")
    if cat == "cross-type" and a["type"] == b["type"]:
        errs.append("cross-type pair has one type")
    if cat != "cross-scope" and a["text"] == b["text"]:
        errs.append("identical texts outside cross-scope")
    if cat == "translation" and not LANG_NOTE_RE.match(r["note"]):
        errs.append("translation note must start with the languages, e.g. 'en/fr'")

    details = r["details"]
    if (
        not isinstance(details, list)
        or not details
        or not all(isinstance(d, str) and d.strip() for d in details)
    ):
        errs.append("details must be a non-empty list of strings")
        details = []
    ta, tb = a["text"], b["text"]
    for d in details:
        where = tb if label == "supersedes" else ta + "\n" + tb
        if not _has(where, d):
            side = "b" if label == "supersedes" else "a or b"
            errs.append(f"detail {d!r} not in {side}")

    ans = r["question"]["answer"]
    if label == "same":
        if not (_has(ta, ans) and _has(tb, ans)):
            errs.append(f"answer {ans!r} must occur in both texts (either may survive a merge)")
    elif label == "supersedes":
        if not _has(tb, ans):
            errs.append(f"answer {ans!r} not in b (the newer value)")
        if _has(ta, ans):
            errs.append(f"answer {ans!r} also in a: the question does not test the newer value")
    else:
        if "question_b" not in r:
            errs.append(f"{label} pairs need question_b (both entries are kept)")
        else:
            if not _has(ta, ans):
                errs.append(f"answer {ans!r} not in a")
            ans_b = r["question_b"]["answer"]
            if not _has(tb, ans_b):
                errs.append(f"question_b answer {ans_b!r} not in b")
    return errs


def main() -> int:
    errors: list[str] = []
    counts: dict[str, Counter] = {}
    labels: dict[str, Counter] = {}
    texts: dict[str, set[str]] = {}
    seen_ids: set[str] = set()
    for split in SPLITS:
        rows = load(split)
        counts[split] = Counter(r.get("category") for r in rows)
        labels[split] = Counter(r.get("label") for r in rows)
        langs: Counter = Counter()
        texts[split] = set()
        for r in rows:
            rid = r.get("id")
            if rid in seen_ids:
                errors.append(f"{split} {rid}: duplicate id")
            seen_ids.add(rid)
            for e in check_row(r, split):
                errors.append(f"{split} {rid}: {e}")
            if isinstance(r.get("a"), dict) and isinstance(r.get("b"), dict):
                texts[split].update({r["a"].get("text"), r["b"].get("text")})
            m = LANG_NOTE_RE.match(str(r.get("note", "")))
            if r.get("category") == "translation" and m:
                pair = set(m.groups())
                if "en" in pair:
                    langs.update(pair - {"en"})
                else:
                    langs["other-other"] += 1
        if len(rows) < MIN_PER_SPLIT:
            errors.append(f"{split}: {len(rows)} pairs < {MIN_PER_SPLIT}")
        for cat in CATEGORIES:
            need = MIN_OVERRIDE.get(cat, MIN_PER_CATEGORY)
            if counts[split][cat] < need:
                errors.append(f"{split}: {cat} has {counts[split][cat]} < {need}")
        for lang in LANGS:
            if langs[lang] < MIN_EN_PAIRS_PER_LANG:
                errors.append(f"{split}: en/{lang} translation pairs {langs[lang]} < 4")
        if langs["other-other"] == 0:
            errors.append(f"{split}: no translation pair between two non-English entries")
        print(
            f"{split}: translation mix "
            + ", ".join(f"en/{x}={langs[x]}" for x in LANGS)
            + f", other/other={langs['other-other']}"
        )
    for i, first in enumerate(SPLITS):
        for second in SPLITS[i + 1 :]:
            for t in sorted(texts[first] & texts[second]):
                errors.append(f"entry text in both {first} and {second}: {t!r}")

    width = max(len(c) for c in CATEGORIES)
    head = "".join(f"  {split:>7}" for split in SPLITS)
    print(f"\n{'category':<{width}}{head}")
    for cat in CATEGORIES:
        print(f"{cat:<{width}}" + "".join(f"  {counts[sp][cat]:>7}" for sp in SPLITS))
    print(f"{'total':<{width}}" + "".join(f"  {sum(counts[sp].values()):>7}" for sp in SPLITS))
    print(f"\n{'label':<{width}}{head}")
    for lab in LABELS:
        print(f"{lab:<{width}}" + "".join(f"  {labels[sp][lab]:>7}" for sp in SPLITS))

    if errors:
        print(f"\n{len(errors)} error(s):", file=sys.stderr)
        for e in errors:
            print("  " + e, file=sys.stderr)
        return 1
    print("\nok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
