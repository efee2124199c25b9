"""The dream cycle: merge, reconcile, decay, forget, journal, archive, review queue."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from memcore.dream import cycle, review, tables
from memcore.dream.settings import consolidation_settings
from memcore.errors import ConfigError, StalePlan
from memcore.journal import runs as journal
from memcore.recall import ledger
from memcore.workspace.config import load_config
from memcore.workspace.core import Workspace
from memcore.workspace.entries import parse
from memcore.workspace.markdown import text_entry_id

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
STEPS = ("merge", "reconcile", "decay", "forget")


def write(ws: Workspace, body: str) -> str:
    text = "# Long-Term Memory\n\n" + body
    ws.memory_md.write_text(text, encoding="utf-8")
    return text


def marker(eid: str, **attrs: str) -> str:
    extra = "".join(f' {k}="{v}"' for k, v in attrs.items())
    return f'<!-- memcore:entry id="{eid}"{extra} -->\n'


def run(ws: Workspace, now: datetime = NOW) -> dict:
    return cycle.run_cycle(ws, now=now, mode="auto", steps=STEPS)


def ids(ws: Workspace) -> list[str]:
    return [e.id for e in parse(ws.memory_md.read_text(encoding="utf-8")).entries]


def test_run_cycle_result_keys_and_light_edit_merge(ws: Workspace) -> None:
    write(
        ws,
        "- The API server listens on port 8080.\n- The API server listens on port 8080!\n"
        "- Unrelated fact about the wiki.\n",
    )
    res = run(ws)
    for key in (
        "promoted",
        "merged",
        "conflicts",
        "decayed",
        "forgotten",
        "remaining",
        "durationMs",
        "ranAt",
    ):
        assert key in res
    assert (
        res["merged"] == 1 and res["remaining"] == 2 and res["ranAt"] == "2026-11-30T03:00:00.000Z"
    )
    text = ws.memory_md.read_text(encoding="utf-8")
    assert (
        text == "# Long-Term Memory\n\n- The API server listens on port 8080.\n"
        "- Unrelated fact about the wiki.\n"
    )
    archive = ws.archive_path.read_text(encoding="utf-8")
    assert "merged into" in archive and "- The API server listens on port 8080!" in archive
    with tables.connect(ws) as conn:
        keeper = ledger.load_rows(conn, [text_entry_id("The API server listens on port 8080.")])
        assert next(iter(keeper.values())).importance == pytest.approx(0.55)
        runs = journal.runs(conn)
        assert runs[0]["counters"]["merged"] == 1
        changes = journal.changes_of(conn, runs[0]["runId"])
        assert {c.action for c in changes} == {"remove", "meta"}
        assert any(c.before_raw == "- The API server listens on port 8080!\n" for c in changes)


def test_preview_writes_nothing(ws: Workspace) -> None:
    text = write(
        ws,
        "- The nightly backup job copies the database to S3.\n"
        "- The nightly backup job copies the database to S3!\n",
    )
    plan = cycle.preview(ws, now=NOW, steps=STEPS)
    assert len(plan.merges) == 1
    assert ws.memory_md.read_text(encoding="utf-8") == text
    assert not ws.db_path.exists() and not ws.archive_path.exists()


def test_keeper_rules_importance_scope_created(ws: Workspace) -> None:
    write(
        ws,
        marker("low", scope="global", created="2026-01-01")
        + "- Deploy on Tuesday mornings.\n"
        + marker("high", scope="global", created="2026-06-01")
        + "- Deploy on Tuesday mornings!\n",
    )
    with tables.connect(ws) as conn:
        ledger.save(
            conn, [ledger.Meta(id="high", importance=0.9, created_at="2026-06-01T00:00:00.000Z")]
        )
    plan = cycle.preview(ws, now=NOW, steps=STEPS)
    assert [(m.keeper, m.absorbed) for m in plan.merges] == [("high", ["low"])]
    # Same importance and details: the newer one is kept.
    write(
        ws,
        marker("a1", created="2026-05-01")
        + "- Deploy on Tuesday mornings.\n"
        + marker("a2", created="2026-01-01")
        + "- Deploy on Tuesday mornings!\n",
    )
    plan = cycle.preview(ws, now=NOW, steps=STEPS)
    assert [(m.keeper, m.absorbed) for m in plan.merges] == [("a1", ["a2"])]


def test_never_across_scopes_and_pinned_never_absorbed_but_types_merge(ws: Workspace) -> None:
    write(
        ws,
        marker("g", scope="global")
        + "- The cache TTL is 300 seconds.\n"
        + marker("p", scope="project")
        + "- The cache TTL is 300 seconds!\n"
        + marker("t1", type="fact")
        + "- Backups run at night in the bucket.\n"
        + marker("t2", type="decision")
        + "- Backups run at night in the bucket!\n"
        + marker("pin", pinned="true")
        + "- Logs are JSON lines.\n"
        + marker("imp")
        + "- Logs are JSON lines!\n",
    )
    with tables.connect(ws) as conn:
        ledger.save(
            conn, [ledger.Meta(id="imp", importance=0.99, created_at="2020-01-01T00:00:00.000Z")]
        )
    plan = cycle.preview(ws, now=NOW, steps=STEPS)
    got = sorted((m.keeper, m.absorbed) for m in plan.merges)
    # scope is a wall; type is only a signal: one fact under two types merges
    assert got == [("pin", ["imp"]), ("t1", ["t2"])] or got == [("pin", ["imp"]), ("t2", ["t1"])]


def test_contradiction_is_a_conflict_not_a_merge_and_goes_to_review(ws: Workspace) -> None:
    write(
        ws,
        marker("old", created="2026-01-01")
        + "- The API server listens on port 8080.\n"
        + marker("new", created="2026-06-01")
        + "- The API server listens on port 9090.\n",
    )
    res = run(ws)
    assert res["merged"] == 0 and res["conflicts"] == 1 and res["reviewPending"] == 1
    assert ids(ws) == ["old", "new"]
    items = review.pending(ws)
    assert len(items) == 1 and items[0]["kind"] == "conflict"
    assert items[0]["a"]["id"] == "new"  # the likely winner is the newer
    assert "8080" in items[0]["reason"] and "9090" in items[0]["reason"]
    # A second run does not queue the same pair again.
    res = run(ws, NOW + timedelta(hours=1))
    assert res["reviewPending"] == 1
    out = review.resolve(ws, items[0]["itemId"], "a", now=NOW + timedelta(hours=2))
    assert out["status"] == "resolved"
    assert ids(ws) == ["new"]
    assert review.pending(ws) == []


def test_lossless_merge_text_is_applied_by_auto(ws: Workspace) -> None:
    short = "The build uses pytest for tests and ruff for lint."
    write(ws, f"- {short}\n- {short[:-1]} at /srv/app/pyproject.toml.\n")
    with tables.connect(ws) as conn:  # make the shorter one the keeper
        ledger.save(
            conn,
            [
                ledger.Meta(
                    id=text_entry_id(short), importance=0.9, created_at="2026-11-01T00:00:00.000Z"
                )
            ],
        )
    plan = cycle.preview(ws, now=NOW, steps=STEPS)
    assert len(plan.merges) == 1 and not plan.merges[0].lossy
    assert plan.merges[0].keeper == text_entry_id(short)
    res = run(ws)
    assert res["merged"] == 1 and res["mergesDeferred"] == 0
    text = ws.memory_md.read_text(encoding="utf-8")
    assert "/srv/app/pyproject.toml" in text and len(ids(ws)) == 1
    assert text.count("pytest") == 1  # one statement, not two sentences glued together
    assert '<!-- memcore:entry id="' in text  # the rewritten keeper keeps its id in a marker


LONG = (
    "Deploys use Argo CD, synced from the gitops repo every 3 minutes, with manual approval "
    "for prod, and Slack alerts in #deploys."
)


def test_merge_that_cannot_be_written_losslessly_waits_for_review(ws: Workspace) -> None:
    write(ws, f"- Deploys use Argo CD.\n- {LONG}\n")
    with tables.connect(ws) as conn:  # the short one is the keeper: no lossless text exists
        ledger.save(
            conn,
            [
                ledger.Meta(
                    id=text_entry_id("Deploys use Argo CD."),
                    importance=0.9,
                    created_at="2026-11-01T00:00:00.000Z",
                )
            ],
        )
    plan = cycle.preview(ws, now=NOW, steps=STEPS)
    assert len(plan.merges) == 1 and plan.merges[0].lossy
    res = run(ws)
    assert res["merged"] == 0 and res["mergesDeferred"] == 1
    assert len(ids(ws)) == 2
    item = review.pending(ws)[0]
    assert item["kind"] == "merge" and item["absorbed"][0]["text"] == LONG
    review.resolve(ws, item["itemId"], "apply", now=NOW)
    assert len(ids(ws)) == 1


def test_forget_reasons_pinned_kept_archive_recreated(ws: Workspace) -> None:
    old = "2025-01-01"
    write(
        ws,
        marker("s", type="session_state", created=old)
        + "- Debugging the login test now.\n"
        + marker("lc", confidence="0.2")
        + "- Maybe look at something later.\n"
        + marker("lcs", confidence="0.2")
        + "- Maybe look at /etc/app.conf later.\n"
        + marker("idle", created=old)
        + "- A rarely used fact.\n"
        + marker("pin", pinned="true", type="session_state", created=old, confidence="0.1")
        + "- Keep me.\n"
        + marker("keep")
        + "- A fresh fact.\n",
    )
    with tables.connect(ws) as conn:
        ledger.save(
            conn,
            [
                ledger.Meta(
                    id="idle",
                    importance=0.1,
                    created_at="2025-01-01T00:00:00.000Z",
                    last_accessed_at="2025-02-01T00:00:00.000Z",
                )
            ],
        )
    ws.ensure_dreams_dir()
    ws.archive_path.write_text("old archive\n", encoding="utf-8")
    ws.archive_path.unlink()  # a deleted archive is recreated
    res = cycle.run_cycle(ws, now=NOW, mode="auto", steps=("decay", "forget"))
    assert res["forgotten"] == 3
    assert ids(ws) == ["lcs", "pin", "keep"]
    archive = ws.archive_path.read_text(encoding="utf-8")
    assert archive.startswith("# memcore archive")
    assert "session_state is kept 90 days" in archive
    assert "confidence 0.20 < 0.3" in archive
    assert "not accessed for" in archive and "importance 0.05" in archive  # decayed to the floor
    assert "- Debugging the login test now." in archive and "type=session_state" in archive


def test_retention_setting_never_keeps_session_state(ws: Workspace) -> None:
    ws.config_path.write_text('[retention]\nsession_state = "never"\n', encoding="utf-8")
    # 152 days old: past the default 90-day retention, not yet idle long enough to be forgotten
    write(ws, marker("s", type="session_state", created="2026-07-01") + "- Debugging now.\n")
    assert run(ws)["forgotten"] == 0


def test_stale_plan_is_refused_and_nothing_changes(ws: Workspace) -> None:
    write(ws, "- Same thing here.\n- Same thing here!\n")
    plan = cycle.preview(ws, now=NOW, steps=STEPS)
    edited = ws.memory_md.read_text(encoding="utf-8") + "- A human added this.\n"
    ws.memory_md.write_text(edited, encoding="utf-8")
    with pytest.raises(StalePlan, match="edited since the report"):
        cycle.apply_plan(plan, now=NOW, mode="apply")
    assert ws.memory_md.read_text(encoding="utf-8") == edited
    assert not ws.archive_path.exists()


def test_empty_memory_and_missing_file(ws: Workspace) -> None:
    res = run(ws)
    assert res["remaining"] == 0 and res["merged"] == 0
    assert not ws.memory_md.exists()
    ws.memory_md.write_text("", encoding="utf-8")
    assert run(ws)["remaining"] == 0
    assert ws.memory_md.read_text(encoding="utf-8") == ""


def test_large_memory_file(ws: Workspace) -> None:
    para = ("word " * 1000).strip()
    body = "".join(f"- Entry {k} {para} {k}\n" for k in range(2000))
    write(ws, body)
    assert ws.memory_md.stat().st_size > 10_000_000
    plan = cycle.preview(ws, now=NOW, steps=("decay", "forget"))
    assert len(plan.doc.entries) == 2000


def test_non_english_merge_and_conflict(ws: Workspace) -> None:
    write(
        ws,
        "- Пользователь предпочитает тёмную тему.\n- Пользователь предпочитает тёмную тему!\n"
        "- 用户喜欢用中文回答问题。\n- 用户不喜欢用中文回答问题。\n",
    )
    plan = cycle.preview(ws, now=NOW, steps=STEPS)
    assert len(plan.merges) == 1 and len(plan.conflicts) == 1
    assert plan.conflicts[0].verdict in ("conflict", "supersedes")
    # a negation on one side is an uncertain sign: the suggestion keeps both, and says why
    assert "keep both" in plan.conflicts[0].reason and plan.conflicts[0].suggested == "both"


def test_record_access_counts_memory_md_hits(ws: Workspace) -> None:
    write(ws, "- first\n- second\n")
    n = ledger.record_access(
        ws,
        [
            {"path": "MEMORY.md", "startLine": 3, "endLine": 3},
            {"path": "memory/2026-01-01.md", "startLine": 1, "endLine": 2},
            {"path": "MEMORY.md", "startLine": "x"},
        ],
        NOW,
    )
    assert n == 1
    n = ledger.record_access(
        ws, [{"path": "MEMORY.md", "startLine": 3, "endLine": 4}], NOW + timedelta(days=1)
    )
    assert n == 2
    with tables.connect(ws) as conn:
        rows = ledger.load_rows(conn, [text_entry_id("first"), text_entry_id("second")])
    first = rows[text_entry_id("first")]
    assert first.access_count == 2 and first.last_accessed_at == "2026-12-01T03:00:00.000Z"
    assert rows[text_entry_id("second")].access_count == 1


def test_settings_ranges_and_errors(ws: Workspace) -> None:
    s = consolidation_settings(load_config(ws))
    assert (s.enabled, s.interval_hours, s.decay_days, s.forget_days) == (True, 24, 30, 180)
    assert s.retention == {"session_state": 90, "compact_summary": 90}
    for body, needle in (
        (
            "interval_hours = 0",
            "interval_hours = 0 is out of range; allowed: a number from 1 to 720",
        ),
        ('judge = "oracle"', "judge = 'oracle' is not allowed; allowed: offline, model"),
        (
            "decay_days = 60\nforget_days = 30",
            "forget_days = 30 is out of range; allowed: a number from decay_days (60)",
        ),
        ("forget_below_importance = 2", "forget_below_importance = 2"),
        ('enabled = "yes"', "is not a boolean"),
    ):
        ws.config_path.write_text(f"[consolidation]\n{body}\n", encoding="utf-8")
        with pytest.raises(ConfigError, match="consolidation") as exc:
            consolidation_settings(load_config(ws))
        assert needle in str(exc.value)
    ws.config_path.write_text("[retention]\nbogus = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not an entry type"):
        consolidation_settings(load_config(ws))


def test_last_run_time_is_state_not_config(ws: Workspace) -> None:
    write(ws, "- a fact\n")
    assert cycle.last_run_at(ws) is None
    run(ws)
    assert cycle.last_run_at(ws) == NOW
    ws.config_path.write_text("[consolidation]\ninterval_hours = 48\n", encoding="utf-8")
    assert cycle.last_run_at(ws) == NOW
    con = sqlite3.connect(ws.db_path)
    assert con.execute("SELECT count(*) FROM dream_runs").fetchone()[0] == 1
    con.close()


def test_rejected_merge_is_not_queued_again(ws: Workspace) -> None:
    write(ws, f"- Deploys use Argo CD.\n- {LONG}\n")
    with tables.connect(ws) as conn:
        ledger.save(
            conn,
            [
                ledger.Meta(
                    id=text_entry_id("Deploys use Argo CD."),
                    importance=0.9,
                    created_at="2026-11-01T00:00:00.000Z",
                )
            ],
        )
    run(ws)
    item = review.pending(ws)[0]
    assert review.resolve(ws, item["itemId"], "reject", now=NOW)["status"] == "dismissed"
    assert run(ws, NOW + timedelta(days=2))["reviewPending"] == 0
    assert len(ids(ws)) == 2
