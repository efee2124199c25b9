"""Decay is a function of an entry's own dates: the cadence of the cycle changes nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memcore.dream import cycle, tables
from memcore.dream.lifecycle import importance_at
from memcore.dream.settings import ConsolidationSettings
from memcore.recall import ledger
from memcore.recall.ledger import Meta
from memcore.workspace.core import Workspace
from memcore.workspace.entries import parse

START = datetime(2026, 9, 1, 3, 0, tzinfo=UTC)
STEPS = ("merge", "reconcile", "decay", "forget")


def marker(eid: str, **attrs: str) -> str:
    extra = "".join(f' {k}="{v}"' for k, v in attrs.items())
    return f'<!-- memcore:entry id="{eid}"{extra} -->\n'


def days_ago(n: int) -> str:
    return (START - timedelta(days=n)).strftime("%Y-%m-%dT%H:%M:%SZ")


MEMORY = (
    "# Long-Term Memory\n\n"
    + marker("fresh", created=days_ago(5))
    + "- The release checklist lives in docs/release.md.\n"
    + marker("idle", created=days_ago(150))
    + "- The old VPN gateway is vpn1.corp.example.\n"
    + marker("older", created=days_ago(175))
    + "- Grafana dashboards were exported to grafana/legacy.json.\n"
    + marker("pinned", created=days_ago(400), pinned="true")
    + "- Never force-push to main.\n"
    + marker("state", created=days_ago(70), type="session_state")
    + "- Currently bisecting the flaky login test.\n"
    + marker("used", created=days_ago(150))
    + "- Staging deploys go through the deploy-staging workflow.\n"
)


def make(tmp_path: Path, name: str) -> Workspace:
    root = tmp_path / name
    (root / "memory").mkdir(parents=True)
    ws = Workspace(root)
    ws.memory_md.write_text(MEMORY, encoding="utf-8")
    return ws


def simulate(ws: Workspace, step: timedelta, days: int = 60) -> tuple[str, dict[str, float]]:
    """Run the cycle every ``step`` from START to START + ``days`` (the last run on that date);
    the entry "used" is read by a search on day 20."""
    end = START + timedelta(days=days)
    access = START + timedelta(days=20)
    accessed = False
    t = START
    while True:
        if not accessed and t >= access:
            accessed = _touch(ws, "used", access)
        cycle.run_cycle(ws, now=t, mode="auto", steps=STEPS)
        if t >= end:
            break
        t = min(t + step, end)
    with tables.connect(ws) as conn:
        doc = parse(ws.memory_md.read_text(encoding="utf-8"))
        rows = ledger.load_rows(conn, [e.id for e in doc.entries])
    return ws.memory_md.read_text(encoding="utf-8"), {k: m.importance for k, m in rows.items()}


def _touch(ws: Workspace, eid: str, when: datetime) -> bool:
    """What a memory search hit does to the ledger: one access at ``when``."""
    doc = parse(ws.memory_md.read_text(encoding="utf-8"))
    e = doc.by_id()[eid]
    hits = [{"path": "MEMORY.md", "startLine": e.start + 1, "endLine": e.end}]
    return ledger.record_access(ws, hits, when) == 1


def test_cadence_does_not_change_memory(tmp_path: Path) -> None:
    results = {
        name: simulate(make(tmp_path, name), step)
        for name, step in (
            ("daily", timedelta(days=1)),
            ("weekly", timedelta(days=7)),
            ("monthly", timedelta(days=30)),
            ("once", timedelta(days=60)),
        )
    }
    texts = {name: text for name, (text, _) in results.items()}
    assert len(set(texts.values())) == 1, texts
    text = texts["daily"]
    # It did forget and keep what the dates say, whatever the cadence:
    assert "vpn1.corp.example" not in text and "grafana/legacy.json" not in text  # idle, decayed
    assert "bisecting" not in text  # session_state past its 90 days
    for kept in ("docs/release.md", "force-push", "deploy-staging"):
        assert kept in text
    importances = {name: imp for name, (_, imp) in results.items()}
    assert all(imp == importances["daily"] for imp in importances.values()), importances
    assert importances["daily"]["used"] == pytest.approx(0.5)  # the ledger keeps the base


def test_importance_formula() -> None:
    s = ConsolidationSettings(decay_days=30)
    now = datetime(2026, 6, 1, tzinfo=UTC)

    def meta(idle: float, **kw: object) -> Meta:
        created = (now - timedelta(days=idle)).isoformat()
        return Meta(id="x", importance=0.5, created_at=created, **kw)  # type: ignore[arg-type]

    assert importance_at(meta(10), now, s) == 0.5
    assert importance_at(meta(30), now, s) == 0.5
    assert importance_at(meta(60), now, s) == pytest.approx(0.4)
    assert importance_at(meta(90), now, s) == pytest.approx(0.32)
    assert importance_at(meta(45), now, s) == pytest.approx(0.5 * 0.8**0.5)
    assert importance_at(meta(3000), now, s) == 0.05  # the floor
    assert importance_at(meta(3000, pinned=True), now, s) == 0.5
    accessed = Meta(
        id="x",
        importance=0.5,
        created_at=(now - timedelta(days=400)).isoformat(),
        last_accessed_at=(now - timedelta(days=2)).isoformat(),
    )
    assert importance_at(accessed, now, s) == 0.5  # a use restores the base


def test_repeated_runs_do_not_compound(ws: Workspace) -> None:
    ws.memory_md.write_text(
        "# Long-Term Memory\n\n" + marker("d", created="2026-01-01") + "- Old but kept note.\n",
        encoding="utf-8",
    )
    now = datetime(2026, 3, 2, tzinfo=UTC)  # 60 days idle
    for h in range(0, 48, 6):
        res = cycle.run_cycle(ws, now=now + timedelta(hours=h), mode="auto", steps=STEPS)
    assert res["decayed"] == 1
    plan = cycle.preview(ws, now=now, steps=STEPS)
    assert plan.decays[0].after.importance == pytest.approx(0.4)
    with tables.connect(ws) as conn:
        assert ledger.load_rows(conn, ["d"])["d"].importance == pytest.approx(0.5)
