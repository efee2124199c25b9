"""The bundled example workspace: its recall store, its notes and its config stay consistent.

The README's first command runs promotion on this workspace, so the store must read back clean,
point at real lines of the daily notes, and keep showing candidates long after it was made.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from datetime import date, datetime, timedelta
from pathlib import Path
from types import ModuleType

import pytest

from memcore.recall.entries import entry_key, normalize_snippet
from memcore.recall.scoring import Thresholds, first_failed_gate, rank, score_entry
from memcore.recall.store import read_store
from memcore.workspace.config import dreaming_settings, load_config
from memcore.workspace.core import Workspace, is_daily_note_path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "workspace"
GENERATOR = ROOT / "examples" / "make_recall_store.py"
TWO_YEARS_AHEAD = datetime.fromisoformat("2028-11-30T09:00:00+00:00")
TODAY = datetime.fromisoformat("2026-11-30T09:00:00+00:00")


@pytest.fixture(scope="module")
def example() -> Workspace:
    return Workspace(EXAMPLE)


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_recall_store", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _core_thresholds(ws: Workspace) -> Thresholds:
    settings = dreaming_settings(load_config(ws))
    assert settings.mode == "core"
    return Thresholds.from_settings(settings)


def test_store_reads_back_clean(example: Workspace) -> None:
    store = read_store(example, now=TODAY)
    assert store.quarantined is None
    assert store.invalid == 0
    assert len(store.entries) >= 40
    raw = read_store(example, now=TODAY, normalize=False)
    assert raw.entries == store.entries, "normalisation on read must not change any entry"
    for key, e in store.entries.items():
        assert key == entry_key(e["path"], e["startLine"], e["endLine"])
        assert is_daily_note_path(e["path"])
        assert e["recallCount"] >= 1
        assert 0.55 <= e["maxScore"] <= 0.97
        assert 0.55 * e["recallCount"] <= e["totalScore"] <= e["maxScore"] * e["recallCount"] + 1e-9
        assert 1 <= len(e["queryHashes"]) <= e["recallCount"]
        assert all(re.fullmatch(r"[0-9a-f]{12}", h) for h in e["queryHashes"])
        assert e["firstRecalledAt"] <= e["lastRecalledAt"] <= store.updated_at
        assert "promotedAt" not in e


def test_every_entry_points_at_its_snippet(example: Workspace) -> None:
    store = read_store(example, now=TODAY)
    for e in store.entries.values():
        note = example.root / e["path"]
        lines = note.read_text(encoding="utf-8").splitlines()
        assert e["endLine"] <= len(lines), e["key"]
        text = "\n".join(lines[e["startLine"] - 1 : e["endLine"]])
        assert normalize_snippet(text) == e["snippet"], e["key"]
        # recalled only on or after the day the note was written
        assert e["firstRecalledAt"][:10] >= Path(e["path"]).stem


def test_candidates_today_and_two_years_ahead(example: Workspace) -> None:
    store = read_store(example, now=TODAY)
    th = _core_thresholds(example)
    today = rank(store.entries.values(), TODAY, th)
    later = rank(store.entries.values(), TWO_YEARS_AHEAD, th)
    assert len(later) >= 3
    assert len(today) > len(later), "some candidates should age out as recency decays"
    assert {c.key for c in later} <= {c.key for c in today}
    for c in later:
        assert c.components["recency"] < 1e-6
        assert c.recall_count >= 3 and c.unique_queries >= 2 and c.score >= 0.75
    # the rest fails a gate for a visible reason, each kind represented
    failed = {
        first_failed_gate(score_entry(e, TODAY, th.sanitized()), th.sanitized())
        for e in store.entries.values()
    }
    assert {"recallCount", "uniqueQueries", "score", None} <= failed


def test_example_config_parses(example: Workspace) -> None:
    settings = dreaming_settings(load_config(example))
    assert settings.mode == "core"
    assert settings.timezone == "Europe/Berlin" and settings.timezone_explicit
    assert settings.cron == "0 3 * * *"
    assert (settings.min_score, settings.min_recall_count, settings.min_unique_queries) == (
        0.75,
        3,
        2,
    )
    assert settings.max_entries == 5000


def test_workspace_shape(example: Workspace) -> None:
    notes = example.daily_notes()
    days = [date.fromisoformat(p.stem) for p in notes]
    assert len(days) >= 21
    assert days == [days[0] + timedelta(days=i) for i in range(len(days))], "consecutive days"
    for p in notes:
        n = len(p.read_text(encoding="utf-8").splitlines())
        assert 15 <= n <= 60, f"{p.name} has {n} lines"
    memory = example.memory_md.read_text(encoding="utf-8")
    assert memory.startswith("# Long-Term Memory\n")
    for topic in re.findall(r"\]\((memory/[a-z-]+\.md)\)", memory):
        assert (example.root / topic).is_file(), topic
    assert len(re.findall(r"\]\((memory/[a-z-]+\.md)\)", memory)) >= 2
    assert 25 <= sum(line.startswith("- ") for line in memory.splitlines()) <= 40


def test_generator_reproduces_the_committed_store(example: Workspace, tmp_path: Path) -> None:
    out = tmp_path / "short-term-recall.json"
    _generator().build(example.root, out)
    assert out.read_bytes() == example.store_path.read_bytes(), (
        "examples/workspace store is stale: run python examples/make_recall_store.py"
    )
