"""Load one split of the hand-labelled memory-entry pair set.

    from bench.eval.judge.load import load
    pairs = load("tune")

The holdout, fresh and fresh2 splits are for reports only: do not load them while tuning a judge.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPLITS = ("tune", "holdout", "fresh", "fresh2")


def path(split: str) -> Path:
    """Path of the JSONL file of ``split``."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    return HERE / f"{split}.jsonl"


def load(split: str) -> list[dict]:
    """All pairs of ``split`` (one of SPLITS), in file order, one dict per line."""
    rows: list[dict] = []
    with path(split).open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"{split}.jsonl line {n}: {e}") from e
    return rows
