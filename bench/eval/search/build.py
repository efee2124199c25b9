"""Write the labelled search workspace and its queries from ``corpus.py``.

    python bench/eval/search/build.py            # rewrites workspace/ and queries.jsonl
    python bench/eval/search/build.py --check    # exit 1 if they differ from corpus.py

``queries.jsonl`` has one query a line: ``id``, ``fact``, ``kind`` (keyword, paraphrase,
question, other, typo), ``lang``, ``query``, ``split`` (tune or holdout: whole facts go to one
split, alternating in sorted order of the fact ids) and ``answers``: every
``{path, startLine, endLine}`` that states the fact (1-based, inclusive).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import FACTS, MEMORY_MD, NOTES, REPEATS  # noqa: E402

WORKSPACE = HERE / "workspace"
QUERIES = HERE / "queries.jsonl"
KINDS = ("keyword", "paraphrase", "question", "other", "typo")
LANGS = ("fr", "de", "es", "zh", "ja")


def render() -> tuple[dict[str, str], list[dict]]:
    """(files by workspace-relative path, queries)."""
    files: dict[str, str] = {"MEMORY.md": "\n".join(MEMORY_MD) + "\n"}
    where: dict[str, list[dict]] = {fid: [] for fid in FACTS}
    repeat_used: dict[str, int] = {}
    for day, sections in NOTES.items():
        rel = f"memory/{day}.md"
        lines = [f"# {day}", ""]
        for heading, items in sections:
            lines += [f"## {heading}", ""]
            for item in items:
                if item.startswith("@"):
                    fid = item[1:].rstrip("+")
                    if item.endswith("+"):
                        n = repeat_used.get(fid, 0)
                        text = REPEATS[fid][n]
                        repeat_used[fid] = n + 1
                    else:
                        text = FACTS[fid][0]
                    where[fid].append(
                        {"path": rel, "startLine": len(lines) + 1, "endLine": len(lines) + 1}
                    )
                    lines.append(text)
                else:
                    lines.append(item)
            lines.append("")
        files[rel] = "\n".join(lines)
    missing = [fid for fid, w in where.items() if not w]
    if missing:
        raise SystemExit(f"facts never written in a note: {', '.join(missing)}")
    queries = []
    for i, fid in enumerate(sorted(FACTS)):
        split = "tune" if i % 2 == 0 else "holdout"
        _, *qs = FACTS[fid]
        lang = LANGS[i % len(LANGS)]
        for kind, q in zip(KINDS, qs, strict=True):
            queries.append(
                {
                    "id": f"{fid}/{kind}",
                    "fact": fid,
                    "kind": kind,
                    "lang": lang if kind == "other" else "en",
                    "query": q,
                    "split": split,
                    "answers": where[fid],
                }
            )
    return files, queries


def main() -> int:
    files, queries = render()
    text = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries)
    if "--check" in sys.argv:
        same = QUERIES.read_text(encoding="utf-8") == text and all(
            (WORKSPACE / rel).read_text(encoding="utf-8") == body for rel, body in files.items()
        )
        print("up to date" if same else "workspace/ or queries.jsonl differ from corpus.py")
        return 0 if same else 1
    for rel, body in files.items():
        path = WORKSPACE / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    QUERIES.write_text(text, encoding="utf-8")
    print(
        f"{len(files)} files, {len(queries)} queries "
        f"({sum(q['split'] == 'tune' for q in queries)} tune)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
