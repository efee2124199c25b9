"""The store file split into blocks, and the mirror brought along from them after another tool
wrote the file: the same rows as a rebuild from a full parse, whatever the layout."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import orjson
import pytest

from memcore.errors import StoreCorrupt
from memcore.recall import blocks
from memcore.recall import mirror as recall_index
from memcore.recall import store as recall
from memcore.recall.store import Store, fresh_mirror, write_store
from memcore.workspace.core import Workspace

NOW = datetime(2026, 4, 10, tzinfo=UTC)


def entry(path: str, start: int, *, snippet: str, count: int = 2) -> dict:
    return {
        "key": f"memory:{path}:{start}:{start}",
        "path": path,
        "startLine": start,
        "endLine": start,
        "source": "memory",
        "snippet": snippet,
        "recallCount": count,
        "dailyCount": 0,
        "groundedCount": 0,
        "totalScore": 0.5 * count,
        "maxScore": 1.0,
        "firstRecalledAt": "2026-04-01T00:00:00.000Z",
        "lastRecalledAt": f"2026-04-0{1 + start % 9}T00:00:00.000Z",
        "queryHashes": [f"h{start}", "h0"],
        "recallDays": ["2026-04-01"],
        "conceptTags": [],
    }


def store_entries() -> dict[str, dict]:
    snippets = [
        'quotes " and \\ backslashes',
        "unicode café ✓ and \u2028",
        "tab\there, a control \x01 char",
        "- plain",
        '", \n    "looks like a block',
    ]
    out = {}
    for i in range(25):
        e = entry(f"memory/2026-04-0{1 + i % 5}.md", i + 1, snippet=snippets[i % len(snippets)])
        out[e["key"]] = e
    odd = entry("memory/2026-04-02.md", 77, snippet="an odd key")
    odd["key"] = 'memory:memory/2026-04-02.md:7"7\\:é'
    out[odd["key"]] = odd
    return out


def rows(conn) -> dict[str, dict]:
    return {
        r["key"]: recall_index.row_entry(r)
        for r in conn.execute("SELECT * FROM recall_index").fetchall()
    }


def rebuilt(ws: Workspace) -> dict[str, dict]:
    store = recall.read_store(ws, now=NOW, set_aside=False)
    conn = recall_index.memory_connect()
    try:
        recall_index.replace_all(conn, store.entries, None)
        return rows(conn)
    finally:
        conn.close()


def mirrored(ws: Workspace) -> dict[str, dict]:
    conn = fresh_mirror(ws, NOW)
    try:
        return rows(conn)
    finally:
        conn.close()


@pytest.fixture
def written(ws: Workspace) -> Workspace:
    write_store(ws, Store(entries=store_entries()), NOW)
    mirrored(ws)
    return ws


def test_a_file_memcore_wrote_splits_into_its_entries_with_their_hashes(written) -> None:
    data = written.store_path.read_bytes()
    found = blocks.split(data)
    assert found is not None
    entries = orjson.loads(data)["entries"]
    assert found.keys == list(entries)
    assert [found.value(i) for i in range(len(found.keys))] == list(entries.values())
    by_entry = {k: blocks.entry_hash(k, v, as_written=True) for k, v in store_entries().items()}
    assert dict(zip(found.keys, found.hashes, strict=True)) == by_entry
    assert blocks.hashes_of(store_entries(), as_written=True) == by_entry
    assert blocks.hashes_of(entries) == by_entry


def test_plain_keys_and_escaped_keys_split_alike(ws: Workspace) -> None:
    """Keys without an escape are read from the blocks themselves, a file with any escaped
    key by the key pattern: both give the keys and entries a parse gives."""
    plain = {k: v for k, v in store_entries().items() if "\\" not in json.dumps(k)}
    for entries in (plain, store_entries()):
        write_store(ws, Store(entries=entries), NOW)
        data = ws.store_path.read_bytes()
        found = blocks.split(data)
        assert found is not None
        parsed = orjson.loads(data)["entries"]
        assert found.keys == list(parsed)
        assert [found.value(i) for i in range(len(found.keys))] == list(parsed.values())
    # a quote inside a key's name that is not its end: not split (read whole, and invalid)
    for entries in (plain, store_entries()):
        write_store(ws, Store(entries=entries), NOW)
        data = ws.store_path.read_bytes().replace(b',\n    "memory:', b',\n    "memory"x:', 1)
        assert blocks.split(data) is None


@pytest.mark.parametrize(
    ("layout", "splits"),
    [
        (lambda doc: orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n", True),
        (lambda doc: json.dumps(doc, indent=2).encode(), True),  # \u escapes, no final newline
        (lambda doc: json.dumps(doc, indent=2, ensure_ascii=False).encode() + b"\n", True),
        (lambda doc: json.dumps(doc).encode(), False),  # compact: parsed whole
        (lambda doc: json.dumps(doc, indent=4).encode(), False),  # another indent
        (lambda doc: json.dumps(doc, indent="\t").encode(), False),
    ],
)
def test_a_foreign_write_in_any_layout_mirrors_what_a_rebuild_gives(
    written, layout, splits
) -> None:
    doc = json.loads(written.store_path.read_text())
    keys = list(doc["entries"])
    doc["entries"][keys[0]]["recallCount"] += 3
    doc["entries"][keys[1]]["snippet"] = "edited ✓ elsewhere"
    del doc["entries"][keys[2]]
    doc["entries"]["junk-number"] = 5
    doc["entries"]["junk-object"] = {"source": "elsewhere"}
    doc["entries"][keys[3]] = doc["entries"].pop(keys[3])  # moved to the end
    written.store_path.write_bytes(layout(doc))
    assert (blocks.split(written.store_path.read_bytes()) is not None) == splits
    got = mirrored(written)
    assert got == rebuilt(written)
    assert got[keys[0]]["recallCount"] == doc["entries"][keys[0]]["recallCount"]
    assert keys[2] not in got and "junk-number" not in got
    conn = fresh_mirror(written, NOW)
    try:
        assert recall_index.counts(conn)["invalid"] == 2
    finally:
        conn.close()


def test_a_foreign_write_with_a_broken_block_is_handled_as_a_corrupt_file(written) -> None:
    data = written.store_path.read_bytes()
    broken = data.replace(b'"recallCount": 2,', b'"recallCount": 2,,', 1)
    written.store_path.write_bytes(broken)
    with pytest.raises(StoreCorrupt):
        fresh_mirror(written, NOW, read_only=True).close()
    assert written.store_path.read_bytes() == broken, "a preview leaves the file alone"
    assert mirrored(written) == {}
    assert recall.quarantined_files(written), "a writing reader sets it aside"


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.replace(b"\n  }\n}\n", b"\n  }\n}\n{}"),  # something after the document
        lambda d: d[: len(d) // 2],  # cut short
        lambda d: d.replace(b',\n    "', b',\n    "x": {},\n    "x": {},\n    "', 1),  # twice
        lambda d: d.replace(b'"version": 1', b'"version": 2'),
    ],
)
def test_files_not_in_the_layout_are_not_split(written, edit) -> None:
    data = written.store_path.read_bytes()
    assert blocks.split(data) is not None
    assert blocks.split(edit(data)) is None


def test_a_key_twice_is_not_split_and_the_file_is_read_as_json_reads_it(written) -> None:
    data = written.store_path.read_bytes()
    found = blocks.split(data)
    assert found is not None
    first = found.parts[0]
    twice = data.replace(b',\n    "', b',\n    "' + first + b',\n    "', 1)
    assert blocks.split(twice) is None
    written.store_path.write_bytes(twice)
    assert mirrored(written) == rebuilt(written)


def test_recording_after_a_foreign_write_patches_and_keeps_the_mirror_exact(written) -> None:
    doc = json.loads(written.store_path.read_text())
    key = next(iter(doc["entries"]))
    doc["entries"][key]["recallCount"] = 40
    written.store_path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    e = doc["entries"][key]
    hit = {"path": e["path"], "startLine": e["startLine"], "endLine": e["endLine"], "score": 0.9}
    for i in range(2):
        res = recall.record_recalls(
            written, f"later {i}", [dict(hit, snippet=e["snippet"])], now=NOW + timedelta(hours=i)
        )
        assert res.folded
    got = mirrored(written)
    assert got == rebuilt(written)
    assert got[key]["recallCount"] == 42
