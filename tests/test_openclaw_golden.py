"""Golden differential tests: files as OpenClaw writes them, read and written by memcore.

Each test builds the bytes OpenClaw's promotion leaves on disk (its store serialised the way
``JSON.stringify(doc, null, 2)`` prints it, its MEMORY.md sections) and checks that memcore
reads the same candidates and, where both tools write, leaves the same bytes.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from memcore.promotion import promote
from memcore.recall import store as recall
from memcore.recall.entries import query_hash
from memcore.workspace.core import Workspace
from tests.conftest import invoke, write_note

NOW = datetime(2026, 4, 2, 6, 30, tzinfo=UTC)
ISO = "2026-04-02T05:00:00.000Z"


def js_json(doc: Any) -> bytes:
    """``JSON.stringify(doc, null, 2) + "\\n"``: the store as OpenClaw writes it (Python's
    json with an indent prints the same separators; ints stay ints, as in JavaScript)."""
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def oc_entry(path: str, line: int, snippet: str, **over: Any) -> dict[str, Any]:
    key = f"memory:{path}:{line}:{line}"
    e: dict[str, Any] = {
        "key": key,
        "path": path,
        "startLine": line,
        "endLine": line,
        "source": "memory",
        "snippet": snippet,
        "recallCount": 4,
        "totalScore": 4,  # four hits of score 1: JavaScript prints 4, not 4.0
        "maxScore": 1,
        "firstRecalledAt": ISO,
        "lastRecalledAt": ISO,
        "queryHashes": [query_hash(f"q{i}") for i in range(3)],
    }
    e.update(over)
    return e


def write_oc_store(ws: Workspace, entries: list[dict[str, Any]]) -> bytes:
    ws.ensure_dreams_dir()
    doc = {"version": 1, "updatedAt": ISO, "entries": {e["key"]: e for e in entries}}
    data = js_json(doc)
    ws.store_path.write_bytes(data)
    return data


def many_notes(ws: Workspace, n: int) -> list[dict[str, Any]]:
    lines = [f"- Fact number {i} about the deploy pipeline." for i in range(n)]
    write_note(ws, "2026-04-01.md", "# 2026-04-01\n\n" + "\n".join(lines) + "\n")
    return [oc_entry("memory/2026-04-01.md", i + 3, lines[i]) for i in range(n)]


def test_preview_lists_every_qualifying_candidate_and_apply_takes_the_mode_limit(
    ws: Workspace,
) -> None:
    ws.config_path.write_text('[dreaming]\nmode = "core"\n')
    write_oc_store(ws, many_notes(ws, 13))
    assert len(promote.preview(ws, now=NOW).candidates) == 13
    assert len(promote.preview(ws, now=NOW, limit=5).candidates) == 5
    assert len(promote.preview(ws, now=NOW, mode_limit=True).candidates) == 10
    out = invoke(ws, "memory", "promote", env={"MEMCORE_NOW": NOW.isoformat()})
    assert out.exit_code == 0, out.output
    assert out.output.count("memory/2026-04-01.md:") == 13
    applied = invoke(
        ws, "memory", "promote", "--apply", "--json", env={"MEMCORE_NOW": NOW.isoformat()}
    )
    assert json.loads(applied.output)["apply"]["appended"] == 10  # core's limit


def test_promoted_at_counts_only_as_a_non_empty_string(ws: Workspace) -> None:
    entries = many_notes(ws, 5)
    entries[0]["promotedAt"] = 1775100000000  # a number: OpenClaw ignores it
    entries[1]["promotedAt"] = ""
    entries[2]["promotedAt"] = None
    entries[3]["promotedAt"] = "yes"  # any non-empty string is a promotion
    entries[4]["promotedAt"] = "2026-04-01T00:00:00.000Z"
    write_oc_store(ws, entries)
    res = promote.preview(ws, now=NOW)
    assert sorted(c.start_line for c in res.candidates) == [3, 4, 5]
    assert res.store_promoted == 2
    assert res.exclusions["byReason"] == {"promoted": 2}
    # the string OpenClaw wrote survives a rewrite, as written
    recall.record_recalls(
        ws,
        "another query",
        [{"path": "memory/2026-04-01.md", "startLine": 6, "endLine": 6, "score": 1}],
        now=NOW,
    )
    stored = json.loads(ws.store_path.read_text())["entries"]
    assert stored[entries[3]["key"]]["promotedAt"] == "yes"
    assert stored[entries[1]["key"]]["promotedAt"] == ""
    assert entries[0]["key"] in {c.key for c in promote.preview(ws, now=NOW).candidates}


def test_a_store_both_tools_write_stays_byte_identical(ws: Workspace) -> None:
    """OpenClaw's store, promoted by memcore: the bytes are what OpenClaw's own apply writes
    (the same entries with ``promotedAt`` and ``updatedAt`` set), integral numbers included."""
    entries = many_notes(ws, 2)
    entries[1]["totalScore"] = 3.5
    entries[1]["maxScore"] = 0.875
    write_oc_store(ws, entries)
    res = promote.apply(ws, now=NOW)
    assert res.apply["appended"] == 2
    stamp = "2026-04-02T06:30:00.000Z"
    expected = {
        "version": 1,
        "updatedAt": stamp,
        "entries": {e["key"]: {**e, "promotedAt": stamp} for e in entries},
    }
    assert ws.store_path.read_bytes() == js_json(expected)
    assert b"1.0" not in ws.store_path.read_bytes()


def test_recording_writes_integral_scores_as_javascript_does(ws: Workspace) -> None:
    hit = {"path": "memory/2026-04-01.md", "startLine": 1, "endLine": 1, "score": 1}
    recall.record_recalls(ws, "q1", [hit], now=NOW)
    recall.record_recalls(ws, "q2", [hit], now=NOW + timedelta(seconds=1))
    raw = ws.store_path.read_text()
    assert '"totalScore": 2,' in raw and '"maxScore": 1,' in raw
    store = recall.read_store(ws, now=NOW)
    assert ws.store_path.read_bytes() == store.to_json_bytes()


def _crashed_openclaw_memory_md(entries: list[dict[str, Any]], marker: bool) -> str:
    """MEMORY.md after OpenClaw's MEMORY.md write, before its store write."""
    lines = ["# Long-Term Memory", "", "", "## Promoted From Short-Term Memory (2026-04-01)", ""]
    for e in entries:
        if marker:
            lines.append(f"<!-- openclaw-memory-promotion:{e['key']} -->")
        lines.append(
            f"- {e['snippet']} [score=0.836 recalls=4 avg=1.000 "
            f"source={e['path']}:{e['startLine']}-{e['endLine']}]"
        )
    return "\n".join(lines) + "\n"


def test_unmarked_openclaw_bullets_are_never_appended_twice(ws: Workspace) -> None:
    entries = many_notes(ws, 3)
    store_bytes = write_oc_store(ws, entries)
    text = _crashed_openclaw_memory_md(entries[:2], marker=False)
    ws.memory_md.write_text(text)
    res = promote.apply(ws, now=NOW)
    assert res.apply["reconciledExisting"] == 2
    assert res.apply["appended"] == 1  # only the one OpenClaw had not written
    assert res.apply["reinforcedExisting"] == []  # the same promotion, not a new recall
    after = ws.memory_md.read_text()
    assert after.startswith(text)
    assert after.count("Fact number 0 ") == 1 and after.count("Fact number 1 ") == 1
    stored = recall.read_store(ws, now=NOW).entries
    assert all(stored[e["key"]].get("promotedAt") for e in entries)
    # a second crash-recovery run changes nothing
    ws.store_path.write_bytes(store_bytes)
    again = promote.apply(ws, now=NOW + timedelta(minutes=1))
    assert again.apply["appended"] == 0 and again.apply["reconciledExisting"] == 3
    assert ws.memory_md.read_text() == after


def test_unmarked_bullet_under_another_heading_is_not_a_promotion(ws: Workspace) -> None:
    entries = many_notes(ws, 1)
    write_oc_store(ws, entries)
    text = _crashed_openclaw_memory_md(entries, marker=False).replace(
        "## Promoted From Short-Term Memory (2026-04-01)", "## Notes"
    )
    ws.memory_md.write_text(text)
    res = promote.apply(ws, now=NOW)
    assert res.apply["reconciledExisting"] == 0


def test_marked_openclaw_bullets_reconcile(ws: Workspace) -> None:
    entries = many_notes(ws, 2)
    write_oc_store(ws, entries)
    text = _crashed_openclaw_memory_md(entries, marker=True)
    ws.memory_md.write_text(text)
    res = promote.apply(ws, now=NOW)
    assert res.apply["reconciledExisting"] == 2 and res.apply["appended"] == 0
    assert ws.memory_md.read_text() == text
