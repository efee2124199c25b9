"""``memcore dream`` / ``dream history`` / ``dream undo`` / ``review`` / ``memory set``."""

from __future__ import annotations

import json

from memcore.workspace.core import Workspace
from memcore.workspace.entries import parse
from tests.conftest import held_lock
from tests.conftest import invoke as _invoke

#: The commands run on this date (MEMCORE_NOW): the entries' ages, and so their decay, stay fixed.
TODAY = "2026-04-01T09:00:00Z"


def invoke(ws: Workspace, *args: str, input: str | None = None):
    return _invoke(ws, *args, input=input, env={"MEMCORE_NOW": TODAY})


BODY = (
    "# Long-Term Memory\n\n"
    '<!-- memcore:entry id="dup1" created="2026-02-01" -->\n'
    "- The cache TTL is 300 seconds.\n"
    '<!-- memcore:entry id="dup2" created="2026-01-01" -->\n'
    "- The cache TTL is 300 seconds!\n"
    '<!-- memcore:entry id="portA" created="2026-01-01" -->\n'
    "- The API server listens on port 8080.\n"
    '<!-- memcore:entry id="portB" created="2026-03-01" -->\n'
    "- The API server listens on port 9090.\n"
    '<!-- memcore:entry id="old" type="session_state" created="2025-01-01" -->\n'
    "- Debugging the login test.\n"
)

REPORT = """## dream — consolidation report

Merges (1):
  [dup1] + [dup2] → "The cache TTL is 300 seconds."

Conflicts (1):
  [portB] vs [portA] — "api server listens port" [A/B/skip]

Prune (1):
  [old] — session_state, {age}d old

Proposed: 0 promotions, 1 merges, 1 prunes, 1 conflicts. Apply? [Y/n]
"""


def setup(ws: Workspace) -> None:
    ws.memory_md.write_text(BODY, encoding="utf-8")


def age() -> int:
    from datetime import UTC, datetime

    return (datetime(2026, 4, 1, 9, tzinfo=UTC) - datetime(2025, 1, 1, tzinfo=UTC)).days


def test_report_shape_and_preview_writes_nothing(ws: Workspace) -> None:
    setup(ws)
    res = invoke(ws, "dream", "--only", "merge,reconcile,decay,forget")
    assert res.exit_code == 0, res.output
    assert res.stdout == REPORT.format(age=age())
    assert ws.memory_md.read_text(encoding="utf-8") == BODY
    assert not ws.archive_path.exists()


def test_nothing_to_do(ws: Workspace) -> None:
    ws.memory_md.write_text("# Long-Term Memory\n\n- One fact.\n", encoding="utf-8")
    res = invoke(ws, "dream", "--only", "merge,reconcile,decay,forget")
    assert res.stdout == "Dream complete. No duplicate, contradictory, or stale memories found.\n"
    res = invoke(ws, "dream", "--apply", "--only", "merge,forget")
    assert res.stdout == "Dream complete. No duplicate, contradictory, or stale memories found.\n"


def test_apply_interactive_answers_and_summary(ws: Workspace) -> None:
    setup(ws)
    res = invoke(
        ws, "dream", "--apply", "--diff", "--only", "merge,reconcile,decay,forget", input="B\n\n"
    )
    assert res.exit_code == 0, res.output
    assert res.stdout.endswith(
        "Dream complete — promoted: 0, merged: 1, pruned: 1, conflicts resolved: 1, skipped: 0\n"
    )
    assert "Proposed: 0 promotions, 1 merges, 1 prunes, 1 conflicts. Apply? [Y/n]" in res.stdout
    assert "-- The cache TTL is 300 seconds!" in res.stdout  # the diff
    ids = [e.id for e in parse(ws.memory_md.read_text(encoding="utf-8")).entries]
    assert ids == ["dup1", "portA"]  # B (portA) kept; portB lost


def test_apply_no_cancels(ws: Workspace) -> None:
    setup(ws)
    res = invoke(
        ws, "dream", "--apply", "--only", "merge,reconcile,decay,forget", input="skip\nn\n"
    )
    assert res.stdout.endswith("Cancelled. No changes made.\n")
    assert ws.memory_md.read_text(encoding="utf-8") == BODY
    res = invoke(ws, "dream", "--apply", input="")  # end of input: cancelled too
    assert "Cancelled. No changes made." in res.stdout
    assert ws.memory_md.read_text(encoding="utf-8") == BODY


def test_auto_summary_reminder_history_undo_review(ws: Workspace) -> None:
    setup(ws)
    res = invoke(ws, "dream", "--auto", "--only", "merge,reconcile,decay,forget")
    assert res.exit_code == 0, res.output
    assert res.stdout == (
        f"[memcore-dream --auto] workspace={ws.root} promoted=0 merged=1 pruned=1 "
        "conflicts_skipped=1\n"
    )
    assert res.stderr.count("wait for review") + res.stderr.count("waits for review") == 1
    hist = json.loads(invoke(ws, "dream", "history", "--json").stdout)
    assert hist["runs"][0]["counters"]["merged"] == 1
    assert "dream/auto" in invoke(ws, "dream", "history").stdout
    items = json.loads(invoke(ws, "review", "--json").stdout)["items"]
    assert len(items) == 1 and items[0]["kind"] == "conflict"
    res = invoke(ws, "review", input="a\n")
    assert "Review: 1 settled, 0 waiting." in res.stdout
    ids = [e.id for e in parse(ws.memory_md.read_text(encoding="utf-8")).entries]
    assert ids == ["dup1", "portB"]
    res = invoke(ws, "dream", "undo")  # undoes the review run
    assert res.exit_code == 0 and "Undid run" in res.stdout
    run_id = hist["runs"][0]["runId"]
    res = invoke(ws, "dream", "undo", run_id, "--json")
    assert res.exit_code == 0, res.output
    assert ws.memory_md.read_text(encoding="utf-8") == BODY
    res = invoke(ws, "dream", "undo", run_id)
    assert res.exit_code == 1 and "already undone" in res.stderr


def test_auto_json_keys(ws: Workspace) -> None:
    setup(ws)
    out = json.loads(invoke(ws, "dream", "--auto", "--json").stdout)
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
        assert key in out
    assert out["applied"] is True and out["proposals"]["conflicts"][0]["a"] == "portB"
    prev = json.loads(invoke(ws, "dream", "--json").stdout)
    assert prev["applied"] is False and prev["runId"] is None


def test_bad_only_and_flags(ws: Workspace) -> None:
    setup(ws)
    before = ws.memory_md.read_text(encoding="utf-8")
    res = invoke(ws, "dream", "--only", "merge,sleep")
    assert res.exit_code == 2 and "Invalid value for '--only'" in res.stderr
    assert "unknown step(s) sleep" in res.stderr and "promote, merge, reconcile" in res.stderr
    res = invoke(ws, "dream", "--apply", "--auto")
    assert res.exit_code == 2 and "--apply and --auto exclude each other" in res.stderr
    assert ws.memory_md.read_text(encoding="utf-8") == before


def test_memory_set(ws: Workspace) -> None:
    setup(ws)
    res = invoke(ws, "memory", "set", "portA", "--pin", "--type", "fact", "--importance", "0.8")
    assert res.exit_code == 0, res.output
    assert "portA: importance=0.80 type=fact scope=global pinned=yes" in res.stdout
    assert '<!-- memcore:entry id="portA" created="2026-01-01" pinned="true" type="fact" -->' in (
        ws.memory_md.read_text(encoding="utf-8")
    )
    res = invoke(ws, "memory", "set", "nope", "--pin")
    assert res.exit_code == 1 and "no entry 'nope'" in res.stderr
    res = invoke(ws, "memory", "set", "portA", "--type", "gossip")
    assert res.exit_code == 2 and "Invalid value for '--type': 'gossip' is not one of" in res.stderr
    assert "'session_state'" in res.stderr
    assert invoke(ws, "memory", "set", "portA").exit_code == 2


def test_lock_busy_exits_75(ws: Workspace) -> None:
    setup(ws)
    with held_lock(ws):
        res = invoke(ws, "dream", "--auto", "--lock-timeout", "0.2")
        assert res.exit_code == 75
        assert "another run is in progress" in res.stderr
        assert ws.memory_md.read_text(encoding="utf-8") == BODY


def test_apply_yes_asks_nothing_and_skipped_conflicts_wait(ws: Workspace) -> None:
    setup(ws)
    res = invoke(ws, "dream", "--apply", "--yes", "--only", "merge,reconcile,decay,forget")
    assert res.exit_code == 0, res.output
    assert res.stdout.endswith(
        "Dream complete — promoted: 0, merged: 1, pruned: 1, conflicts resolved: 0, skipped: 1\n"
    )
    assert "1 item waits for review" in res.stderr
    ids = [e.id for e in parse(ws.memory_md.read_text(encoding="utf-8")).entries]
    assert ids == ["dup1", "portA", "portB"]


def test_entries_listing(ws: Workspace) -> None:
    setup(ws)
    out = json.loads(invoke(ws, "dream", "entries", "--json").stdout)["entries"]
    assert [e["id"] for e in out] == ["dup1", "dup2", "portA", "portB", "old"]
    assert out[-1]["type"] == "session_state" and out[-1]["startLine"] == 12
    res = invoke(ws, "dream", "entries")
    assert "[portA] unknown/global importance=0.50 lines 8-8: The API server listens" in res.stdout
    assert not ws.db_path.exists()


def test_review_keep_both_is_journaled_not_proposed_again_and_undoable(ws: Workspace) -> None:
    setup(ws)
    assert invoke(ws, "dream", "--auto", "--only", "merge,reconcile").exit_code == 0
    items = json.loads(invoke(ws, "review", "--json").stdout)["items"]
    assert [it["kind"] for it in items] == ["conflict"]
    assert items[0]["choices"] == ["a", "b", "both", "skip"]
    item_id = str(items[0]["itemId"])
    before = ws.memory_md.read_text(encoding="utf-8")
    res = invoke(ws, "review", item_id, "both", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["status"] == "dismissed" and out["runId"]
    assert ws.memory_md.read_text(encoding="utf-8") == before  # both entries stay
    run = json.loads(invoke(ws, "dream", "history", "--json").stdout)["runs"][0]
    assert run["runId"] == out["runId"] and run["kind"] == "review"
    assert run["counters"]["keptBoth"] == 2 and run["counters"]["entries"] == ["portB", "portA"]
    # the next run finds the same conflict, but does not queue it again
    assert invoke(ws, "dream", "--auto", "--only", "merge,reconcile").exit_code == 0
    assert json.loads(invoke(ws, "review", "--json").stdout)["items"] == []
    # undoing the decision puts the item back in the queue
    res = invoke(ws, "dream", "undo", out["runId"])
    assert res.exit_code == 0, res.output
    again = json.loads(invoke(ws, "review", "--json").stdout)["items"]
    assert [it["itemId"] for it in again] == [items[0]["itemId"]]
    res = invoke(ws, "review", input="both\n")  # the interactive prompt offers it too
    assert "[A/B/both/skip]" in res.stdout and "Review: 1 settled, 0 waiting." in res.stdout
    assert ws.memory_md.read_text(encoding="utf-8") == before
    # a settled item is not settled twice
    res = invoke(ws, "review", item_id, "both")
    assert res.exit_code == 1 and "already dismissed" in res.stderr
