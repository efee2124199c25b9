"""Undo fidelity: every kind of run memcore makes, undone at once, gives back MEMORY.md, the
daily notes, the archive and the recall store byte for byte (bench/bench_faults.py counts
the same kinds)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from memcore.workspace.core import Workspace
from memcore.workspace.entries import parse
from tests.conftest import invoke

NOTE = "# 2026-11-20\n\n## Standup\n- Deploys go through the blue/green pipeline on Fridays.\n"
FILLER = "".join(
    f"- {t}\n"
    for t in (
        "The wiki lives at wiki.example.org.",
        "Ana owns billing.",
        "Logs are JSON lines.",
        "Use pnpm, never npm.",
        "Releases are tagged vYYYY.MM.DD.",
        "Ops pages go to #ops-alerts.",
        "Feature flags live in config/flags.yaml.",
    )
)


def marker(eid: str, **attrs: str) -> str:
    extra = "".join(f' {k}="{v}"' for k, v in attrs.items())
    return f'<!-- memcore:entry id="{eid}"{extra} -->\n'


def write(ws: Workspace, body: str) -> None:
    ws.memory_md.write_text("# Long-Term Memory\n\n" + FILLER + body, encoding="utf-8")
    (ws.memory_dir / "2026-11-20.md").write_text(NOTE, encoding="utf-8")


def ok(ws: Workspace, *args: str) -> str:
    res = invoke(ws, *args)
    assert res.exit_code == 0, res.output
    return res.stdout


def snapshot(ws: Workspace) -> dict[str, bytes]:
    """Every file under the workspace but memcore's database and lock (MEMORY.md, the daily
    notes, the archive, the recall store and its log)."""
    out: dict[str, bytes] = {}
    for p in sorted(ws.root.rglob("*")):
        rel = p.relative_to(ws.root).as_posix()
        if p.is_file() and "memcore.sqlite" not in rel and not rel.endswith(".lock"):
            out[rel] = p.read_bytes()
    return out


def seed_recalls(ws: Workspace) -> None:
    from memcore.recall.store import record_recalls
    from memcore.workspace.clock import utcnow

    hit = {
        "path": "memory/2026-11-20.md",
        "startLine": 4,
        "endLine": 4,
        "score": 0.95,
        "snippet": NOTE.split("\n")[3],
    }
    base = utcnow().replace(microsecond=0)
    for i in range(4):
        record_recalls(ws, f"query {i}", [hit], now=base - timedelta(hours=i + 1))


def _promote(ws: Workspace, tmp: Path) -> Callable[[], object]:
    write(ws, "")
    seed_recalls(ws)
    return lambda: ok(ws, "memory", "promote", "--apply")


def _merge(ws: Workspace, tmp: Path) -> Callable[[], object]:
    write(ws, "- The cache TTL is 300 seconds.\n- The cache TTL is 300 seconds!\n")
    return lambda: ok(ws, "dream", "--auto", "--only", "merge")


def _supersede(ws: Workspace, tmp: Path) -> Callable[[], object]:
    write(
        ws,
        marker("old", created="2026-10-01")
        + "- CI runs on Jenkins.\n"
        + marker("new", created="2026-11-01")
        + "- CI moved from Jenkins to Buildkite.\n",
    )
    return lambda: ok(ws, "dream", "--auto", "--only", "reconcile")


def _forget(ws: Workspace, tmp: Path) -> Callable[[], object]:
    write(ws, marker("stale", type="session_state", created="2025-01-01") + "- Debugging.\n")
    return lambda: ok(ws, "dream", "--auto", "--only", "decay,forget")


def _review(ws: Workspace, tmp: Path) -> Callable[[], object]:
    write(
        ws,
        marker("old", created="2026-10-01")
        + "- The payments service listens on port 8001.\n"
        + marker("new", created="2026-11-01")
        + "- The payments service listens on port 9001.\n",
    )
    ok(ws, "dream", "--auto", "--only", "reconcile")
    return lambda: ok(ws, "review", "1", "a")


def _import(ws: Workspace, tmp: Path) -> Callable[[], object]:
    write(ws, "")
    src = tmp / "export.jsonl"
    rows = [{"text": "The API listens on port 8080.", "type": "fact"}, {"memory": "Ship it."}]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return lambda: ok(ws, "import", str(src), "--apply")


def _restore(ws: Workspace, tmp: Path) -> Callable[[], object]:
    _merge(ws, tmp)()
    versions = json.loads(ok(ws, "history", "versions", "--json"))
    oldest = min(v["version"] for v in versions["versions"])
    return lambda: ok(ws, "restore", str(oldest))


def _set(ws: Workspace, tmp: Path) -> Callable[[], object]:
    write(ws, "")
    eid = parse(ws.memory_md.read_text(encoding="utf-8")).entries[0].id
    return lambda: ok(ws, "memory", "set", eid, "--pin", "--type", "decision")


KINDS = {
    "promote": _promote,
    "dream merge": _merge,
    "dream supersede": _supersede,
    "dream forget": _forget,
    "review decision": _review,
    "import": _import,
    "restore": _restore,
    "memory set": _set,
}


# what MEMORY.md says after each kind of run: (text, whether it is there)
EXPECT = {
    "promote": ("blue/green pipeline", True),
    "dream merge": ("The cache TTL is 300 seconds!", False),
    "dream supersede": ("CI runs on Jenkins.", False),
    "dream forget": ("Debugging.", False),
    "review decision": ("port 8001", False),
    "import": ("The API listens on port 8080.", True),
    "restore": ("The cache TTL is 300 seconds!", True),
    "memory set": ('type="decision"', True),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_of_run_undone_gives_back_every_file(
    ws: Workspace, tmp_path: Path, kind: str
) -> None:
    act = KINDS[kind](ws, tmp_path)
    before = snapshot(ws)
    act()
    text, there = EXPECT[kind]
    assert (text in ws.memory_md.read_text(encoding="utf-8")) is there, kind
    assert snapshot(ws) != before
    out = json.loads(ok(ws, "undo", "--json"))
    assert out.get("exact", True), out
    after = snapshot(ws)
    assert after.keys() == before.keys()
    for path, data in before.items():
        assert after[path] == data, f"{kind}: {path} differs after undo"
