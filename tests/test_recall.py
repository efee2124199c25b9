"""The recall store: OpenClaw-compatible format, update rules, bounds and repair."""

from __future__ import annotations

import json
import multiprocessing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memcore.errors import InputError
from memcore.recall import entries as recall_entries
from memcore.recall import repair as recall_repair
from memcore.recall import store as recall
from memcore.workspace.core import Workspace

NOW = datetime(2026, 4, 5, 10, 0, tzinfo=UTC)


def hit(
    path: str = "memory/2026-04-02.md",
    start: int = 3,
    end: int = 5,
    score: float = 0.9,
    snippet: str = "Configured VLAN 10 on the edge router",
) -> dict:
    return {
        "path": path,
        "startLine": start,
        "endLine": end,
        "score": score,
        "snippet": snippet,
        "source": "memory",
    }


def test_query_hash_is_sha1_prefix_of_trimmed_lowercase() -> None:
    import hashlib

    expected = hashlib.sha1(b"router vlan").hexdigest()[:12]
    assert recall_entries.query_hash("  Router VLAN ") == expected
    assert recall_entries.query_hash("router  vlan") != recall_entries.query_hash("router vlan")


def test_record_writes_openclaw_shape(ws: Workspace) -> None:
    recall.record_recalls(ws, "router vlan", [hit()], now=NOW)
    raw = ws.store_path.read_text()
    assert raw.endswith("\n")
    assert raw.startswith('{\n  "version": 1,\n  "updatedAt": "2026-04-05T10:00:00.000Z",')
    doc = json.loads(raw)
    e = doc["entries"]["memory:memory/2026-04-02.md:3:5"]
    assert e == {
        "key": "memory:memory/2026-04-02.md:3:5",
        "path": "memory/2026-04-02.md",
        "startLine": 3,
        "endLine": 5,
        "source": "memory",
        "snippet": "Configured VLAN 10 on the edge router",
        "recallCount": 1,
        "totalScore": 0.9,
        "maxScore": 0.9,
        "firstRecalledAt": "2026-04-05T10:00:00.000Z",
        "lastRecalledAt": "2026-04-05T10:00:00.000Z",
        "queryHashes": [recall_entries.query_hash("router vlan")],
        "userQueryHashes": [recall_entries.query_hash("router vlan")],
    }


def test_update_rules_accumulate_and_keep_promoted(ws: Workspace) -> None:
    recall.record_recalls(ws, "q1", [hit(score=0.5)], now=NOW)
    store = recall.read_store(ws, now=NOW)
    store.entries["memory:memory/2026-04-02.md:3:5"]["promotedAt"] = "2026-04-05T11:00:00.000Z"
    recall.write_store(ws, store, NOW)
    later = NOW + timedelta(hours=2)
    # score clamped to 1, empty snippet keeps the old one, same chunk twice counts twice
    recall.record_recalls(ws, "Q1 ", [hit(score=1.7, snippet=""), hit(score=0.2)], now=later)
    e = recall.read_store(ws, now=later).entries["memory:memory/2026-04-02.md:3:5"]
    assert e["recallCount"] == 3
    assert e["totalScore"] == pytest.approx(0.5 + 1.0 + 0.2)
    assert e["maxScore"] == 1.0
    assert e["snippet"] == "Configured VLAN 10 on the edge router"
    assert e["queryHashes"] == [recall_entries.query_hash("q1")]
    assert e["firstRecalledAt"] == "2026-04-05T10:00:00.000Z"
    assert e["lastRecalledAt"] == "2026-04-05T12:00:00.000Z"
    assert e["promotedAt"] == "2026-04-05T11:00:00.000Z"


def test_only_daily_notes_are_recorded(ws: Workspace) -> None:
    results = [
        hit(path="MEMORY.md"),
        hit(path="memory/network.md"),
        hit(path="notes/2026-04-03.md"),
        {**hit(path="memory/2026-04-03.md"), "source": "sessions"},
        hit(path="./memory/2026-04-04.md", start=1, end=2),
        hit(path="2026-04-06.md", start=1, end=1),
        hit(path="foo\\memory\\2026-04-07.md", start=1, end=1),
    ]
    out = recall.record_recalls(ws, "q", results, now=NOW)
    assert sorted(out.keys) == [
        "memory:2026-04-06.md:1:1",
        "memory:foo/memory/2026-04-07.md:1:1",
        "memory:memory/2026-04-04.md:1:2",
    ]


def test_absolute_path_inside_workspace_is_made_relative(ws: Workspace) -> None:
    out = recall.record_recalls(ws, "q", [hit(path=str(ws.root / "memory/2026-04-02.md"))], now=NOW)
    assert out.keys == ["memory:memory/2026-04-02.md:3:5"]


def test_query_hashes_keep_last_32(ws: Workspace) -> None:
    for i in range(40):
        recall.record_recalls(ws, f"query {i}", [hit()], now=NOW)
    e = recall.read_store(ws, now=NOW).entries["memory:memory/2026-04-02.md:3:5"]
    assert len(e["queryHashes"]) == 32
    assert e["queryHashes"][0] == recall_entries.query_hash("query 8")
    assert e["queryHashes"][-1] == recall_entries.query_hash("query 39")


def test_snippet_is_collapsed_and_capped() -> None:
    long = "word  \n\t" * 500
    out = recall_entries.normalize_snippet(long)
    assert len(out) <= recall_entries.MAX_SNIPPET_CHARS
    assert "  " not in out and "\n" not in out


def test_blank_query_or_no_eligible_hit_writes_nothing(ws: Workspace) -> None:
    assert recall.record_recalls(ws, "   ", [hit()], now=NOW).recorded == 0
    assert recall.record_recalls(ws, "q", [hit(path="MEMORY.md")], now=NOW).recorded == 0
    assert not ws.store_path.exists()


@pytest.mark.parametrize(
    "bad",
    [
        ["not an object"],
        [{"path": "", "startLine": 1, "endLine": 1}],
        [{"path": "memory/2026-01-01.md", "startLine": "x", "endLine": 1}],
        [{"path": "memory/2026-01-01.md", "startLine": 1, "endLine": 1, "score": "high"}],
    ],
)
def test_bad_results_raise_input_error_and_write_nothing(ws: Workspace, bad: list) -> None:
    with pytest.raises(InputError):
        recall.record_recalls(ws, "q", bad, now=NOW)
    assert not ws.store_path.exists()


def test_read_normalises_openclaw_store(ws: Workspace) -> None:
    ws.ensure_dreams_dir()
    ws.store_path.write_text(
        json.dumps(
            {
                "version": 1,
                "entries": {
                    "memory:memory/2026-04-02.md:1:2": {
                        "path": ".\\memory\\2026-04-02.md".replace("\\", "/"),
                        "startLine": 1,
                        "endLine": 2,
                        "source": "memory",
                        "snippet": "  a \n b ",
                        "recallCount": 2.7,
                        "totalScore": -3,
                        "maxScore": 7,
                        "queryHashes": ["abc", "", "abc", 5, "def"],
                    },
                    "bad-source": {
                        "path": "memory/2026-04-02.md",
                        "startLine": 1,
                        "endLine": 1,
                        "source": "sessions",
                    },
                    "bad-lines": {
                        "path": "memory/2026-04-02.md",
                        "startLine": "1",
                        "endLine": 1,
                        "source": "memory",
                    },
                    "no-path": {"startLine": 1, "endLine": 1, "source": "memory"},
                    "junk": 42,
                },
            }
        )
    )
    store = recall.read_store(ws, now=NOW)
    assert store.invalid == 4
    (e,) = store.entries.values()
    assert e["path"] == "memory/2026-04-02.md"
    assert e["snippet"] == "a b"
    assert e["recallCount"] == 2
    assert e["totalScore"] == 0.0
    assert e["maxScore"] == 1.0
    assert e["queryHashes"] == ["abc", "def"]
    assert e["firstRecalledAt"] == "2026-04-05T10:00:00.000Z"
    assert store.updated_at == "2026-04-05T10:00:00.000Z"


@pytest.mark.parametrize(
    "content",
    [b'{"version": 1, "entries": {', b"not json at all", b'["a list"]', b'{"entries": []}'],
)
def test_corrupt_store_is_quarantined_and_recording_goes_on(ws: Workspace, content: bytes) -> None:
    ws.ensure_dreams_dir()
    ws.store_path.write_bytes(content)
    out = recall.record_recalls(ws, "q", [hit()], now=NOW)
    assert out.quarantined is not None
    assert out.quarantined.read_bytes() == content  # nothing lost
    assert out.quarantined.name.startswith("short-term-recall.json.corrupt-20260405T100000")
    assert recall.read_store(ws, now=NOW).entries.keys() == {"memory:memory/2026-04-02.md:3:5"}
    assert recall.quarantined_files(ws) == [out.quarantined]


def test_empty_store_file_reads_as_empty(ws: Workspace) -> None:
    ws.ensure_dreams_dir()
    ws.store_path.write_text("  \n")
    assert recall.read_store(ws, now=NOW).entries == {}
    assert recall.quarantined_files(ws) == []


def test_cap_drops_promoted_then_weakest_never_protected(ws: Workspace) -> None:
    entries = {}
    for i in range(6):
        entries[f"k{i}"] = {
            "recallCount": i + 1,
            "lastRecalledAt": f"2026-04-0{i + 1}T00:00:00.000Z",
        }
    entries["k0"]["promotedAt"] = "2026-04-02T00:00:00.000Z"
    entries["k5"]["promotedAt"] = "2026-04-01T00:00:00.000Z"
    protect = lambda e: e["recallCount"] == 2  # noqa: E731  (k1 passes the gates)
    dropped = recall.enforce_cap(entries, 3, protect)
    assert dropped == ["k5", "k0", "k2"]
    # promoted first (oldest promotion first: k5, then k0), then fewest recalls (k2; k1 protected)
    assert sorted(entries) == ["k1", "k3", "k4"]


def test_record_enforces_cap(ws: Workspace) -> None:
    for i in range(5):
        recall.record_recalls(
            ws, "q", [hit(start=i + 1, end=i + 1)], now=NOW + timedelta(minutes=i), max_entries=3
        )
    keys = set(recall.read_store(ws, now=NOW).entries)
    assert len(keys) == 3
    assert "memory:memory/2026-04-02.md:5:5" in keys  # the newest hit is never dropped


def test_repair_rewrites_only_on_change(ws: Workspace) -> None:
    recall.record_recalls(ws, "q", [hit()], now=NOW)
    before = ws.store_path.read_bytes()
    assert recall_repair.repair_store(ws, now=NOW).changed is False
    assert ws.store_path.read_bytes() == before
    doc = json.loads(before)
    doc["entries"]["junk"] = {"source": "other"}
    doc["entries"]["memory:memory/2026-04-02.md:3:5"]["queryHashes"] *= 2
    ws.store_path.write_text(json.dumps(doc))
    r = recall_repair.repair_store(ws, now=NOW)
    assert r.changed and r.dropped_invalid == 1
    e = recall.read_store(ws, now=NOW).entries["memory:memory/2026-04-02.md:3:5"]
    assert e["queryHashes"] == [recall_entries.query_hash("q")]


def _record_one(root: str) -> None:
    recall.record_recalls(Workspace(Path(root)), "same query", [hit()], lock_timeout=60)


def test_twenty_concurrent_recorders_lose_no_update(ws: Workspace) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_record_one, args=(str(ws.root),)) for _ in range(20)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    e = recall.read_store(ws).entries["memory:memory/2026-04-02.md:3:5"]
    assert e["recallCount"] == 20


def test_fields_from_newer_openclaw_survive_a_rewrite(ws: Workspace) -> None:
    from memcore.promotion import promote

    (ws.memory_dir / "2026-04-02.md").write_text("# d\n\n\nConfigured VLAN 10 on the edge router\n")
    recall.record_recalls(ws, "q0", [hit(start=4, end=4)], now=NOW)
    doc = json.loads(ws.store_path.read_text())
    key = "memory:memory/2026-04-02.md:4:4"
    doc["entries"][key].update(recallDays=["2026-04-05"], conceptTags=["vlan"], claimHash="abc")
    ws.store_path.write_text(json.dumps(doc, indent=2))  # as OpenClaw would write it
    for i in range(1, 4):
        recall.record_recalls(ws, f"q{i}", [hit(start=4, end=4)], now=NOW + timedelta(hours=i))
    promote.apply(ws, now=NOW + timedelta(hours=5))
    e = json.loads(ws.store_path.read_text())["entries"][key]
    assert e["recallCount"] == 4 and "promotedAt" in e
    assert (e["recallDays"], e["conceptTags"], e["claimHash"]) == (["2026-04-05"], ["vlan"], "abc")
