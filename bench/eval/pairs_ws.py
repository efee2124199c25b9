"""A workspace from one split of the judge pair set, with a per-pair truth.

    lab = build_pairs(root, "tune", now)   # writes root/MEMORY.md; returns the truth

Every entry of the split's pairs goes into one MEMORY.md (ids ``<pair id>-a`` / ``-b``, with
type, scope, created and pinned in the marker). memcore's scopes are global, project and
session: ``project:<name>`` becomes ``project``. Entries of different pairs were written not to
restate or contradict one another, so a merge or a flag between two pairs counts as wrong.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "judge"))

from load import load

NEAR = ("qualifier-near-miss", "same-subject-different-fact")


@dataclass
class PairTruth:
    pairs: dict[frozenset[str], dict] = field(default_factory=dict)  # {a, b} -> pair row
    texts: dict[str, str] = field(default_factory=dict)

    def label(self, x: str, y: str) -> str | None:
        row = self.pairs.get(frozenset((x, y)))
        return row["label"] if row else None

    def still_true(self, eid: str) -> bool:
        """Whether the entry states a fact that is true now (the older side of a supersedes
        pair is not; both sides of a conflict count as unknown, so not)."""
        _pid, side = eid.rsplit("-", 1)
        row = next(r for k, r in self.pairs.items() if eid in k)
        if row["label"] == "supersedes":
            return side == "b"
        return row["label"] != "conflict"


def _scope(s: str) -> str:
    return (
        s.split(":", 1)[0] if s.split(":", 1)[0] in ("global", "project", "session") else "global"
    )


def build_pairs(root: Path, split: str, now: datetime) -> PairTruth:
    del now
    truth = PairTruth()
    lines = ["# Long-Term Memory", ""]
    for row in load(split):
        ids = []
        for side in ("a", "b"):
            e = row[side]
            eid = f"{row['id']}-{side}"
            ids.append(eid)
            attrs = (
                f'id="{eid}" type="{e["type"]}" scope="{_scope(e["scope"])}"'
                f' created="{e["created"]}"'
            )
            if e.get("pinned"):
                attrs += ' pinned="true"'
            lines.append(f"<!-- memcore:entry {attrs} -->")
            lines.append(f"- {' '.join(e['text'].split())}")
            truth.texts[eid] = e["text"]
        truth.pairs[frozenset(ids)] = row
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return truth
