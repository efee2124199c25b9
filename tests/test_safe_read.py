"""Only regular files inside the workspace are read, by every face: a symlink leading out, a
FIFO, a link to /dev/zero, a socket and a file over ``[search] max_file_bytes`` are skipped and
named (CLI, HTTP, MCP), never read, never hang a route."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memcore.errors import InputError
from memcore.mcp.server import read_lines
from memcore.workspace import safe_read
from memcore.workspace.core import Workspace
from tests.conftest import invoke, write_note
from tests.test_gateway_helpers import gateway
from tests.test_mcp import call_all, payload

SECRET = "zebrapassword hunter2 from outside"
NOTE = "# Notes\n\n- The zebrapassword vault moved to the basement.\n"


def _symlink_out(ws: Workspace, tmp: Path) -> Iterator[None]:
    (tmp / "passwd.md").write_text(f"root:x:0:0 {SECRET}\n", encoding="utf-8")
    (ws.memory_dir / "special.md").symlink_to(tmp / "passwd.md")
    yield


def _fifo(ws: Workspace, tmp: Path) -> Iterator[None]:
    os.mkfifo(ws.memory_dir / "special.md")
    yield


def _dev_zero(ws: Workspace, tmp: Path) -> Iterator[None]:
    (ws.memory_dir / "special.md").symlink_to("/dev/zero")
    yield


def _socket(ws: Workspace, tmp: Path) -> Iterator[None]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    cwd = os.getcwd()
    os.chdir(ws.memory_dir)  # a relative name: the full path may be past AF_UNIX's 108 bytes
    try:
        sock.bind("special.md")
    finally:
        os.chdir(cwd)
    try:
        yield
    finally:
        sock.close()


def _huge(ws: Workspace, tmp: Path) -> Iterator[None]:
    with open(ws.memory_dir / "special.md", "wb") as fh:  # sparse: 6 MB that cost nothing
        fh.write(f"- {SECRET}\n".encode())
        fh.truncate(6 * 1024 * 1024)
    yield


KINDS: dict[str, tuple[Callable[[Workspace, Path], Iterator[None]], str]] = {
    "symlink-out": (_symlink_out, "a symlink that leads outside the workspace"),
    "fifo": (_fifo, "not a regular file"),
    "dev-zero": (_dev_zero, "not a regular file"),
    "socket": (_socket, "not a regular file"),
    "huge": (_huge, "over the 5242880-byte limit"),
}


@pytest.fixture(params=sorted(KINDS))
def special(request: pytest.FixtureRequest, ws: Workspace, tmp_path: Path) -> Iterator[str]:
    make, reason = KINDS[request.param]
    write_note(ws, "2026-11-20.md", NOTE)
    gen = make(ws, tmp_path)
    next(gen)
    yield reason
    next(gen, None)


def test_cli_search_and_status_skip_and_name_it(ws: Workspace, special: str) -> None:
    res = invoke(ws, "memory", "search", "zebrapassword", "--json", "--no-record")
    assert res.exit_code == 0, res.output
    assert "2026-11-20.md" in res.stdout and SECRET not in res.stdout
    assert "memory/special.md" in res.stderr and special in res.stderr
    status = invoke(ws, "memory", "status")
    assert status.exit_code == 0, status.output
    line = next(ln for ln in status.stdout.splitlines() if "Index skipped: memory/special.md" in ln)
    assert special in line


def test_memory_get_refuses_it(ws: Workspace, special: str) -> None:
    if "limit" in special:  # a big file is paged, never refused: see test_memory_get_pages
        out = read_lines(ws, "memory/special.md", 1, 1)
        assert out["text"] == f"- {SECRET}" and out["truncated"] is False
        return
    with pytest.raises(InputError, match=special.split(" (")[0]):
        read_lines(ws, "memory/special.md")


def test_http_search_skips_every_kind(ws: Workspace, tmp_path: Path) -> None:
    write_note(ws, "2026-11-20.md", NOTE)
    gens = []
    for i, (make, _reason) in enumerate(KINDS.values()):
        sub = tmp_path / f"k{i}"
        sub.mkdir()
        gen = make(ws, sub)
        next(gen)
        gens.append(gen)
        (ws.memory_dir / "special.md").rename(ws.memory_dir / f"special-{i}.md")
    try:
        with gateway([ws], scheduler=False) as (_, client, _served):
            res = client.post("/api/memories/search", json={"query": "zebrapassword hunter2"})
            st = client.get("/api/status")
    finally:
        for gen in gens:
            next(gen, None)
    assert res.status_code == 200, res.text
    body = res.json()
    assert [r["path"] for r in body["results"]] == ["memory/2026-11-20.md"]
    assert SECRET not in res.text
    for i, (_make, reason) in enumerate(KINDS.values()):
        assert any(f"memory/special-{i}.md" in w and reason in w for w in body["warnings"]), i
    assert st.status_code == 200


def test_mcp_search_and_get_refuse_every_kind(ws: Workspace, tmp_path: Path) -> None:
    write_note(ws, "2026-11-20.md", NOTE)
    gens = []
    for i, (make, _reason) in enumerate(KINDS.values()):
        sub = tmp_path / f"k{i}"
        sub.mkdir()
        gen = make(ws, sub)
        next(gen)
        gens.append(gen)
        (ws.memory_dir / "special.md").rename(ws.memory_dir / f"special-{i}.md")
    kinds = list(KINDS)
    try:
        _tools, results = call_all(
            ws,
            [("memory_search", {"query": "zebrapassword hunter2"})]
            + [("memory_get", {"path": f"memory/special-{i}.md"}) for i in range(len(kinds))],
        )
    finally:
        for gen in gens:
            next(gen, None)
    found = payload(results[0])
    assert [r["path"] for r in found["results"]] == ["memory/2026-11-20.md"]
    for i, kind in enumerate(kinds):
        res = results[1 + i]
        if kind == "huge":
            assert payload(res)["nextCursor"] is not None  # paged, not refused
            continue
        assert res.is_error and "refused" in res.content[0].text, kind
        assert SECRET not in res.content[0].text


def test_cap_comes_from_config_and_a_link_inside_is_fine(ws: Workspace) -> None:
    write_note(ws, "2026-11-20.md", NOTE)
    write_note(ws, "big.md", "- zebrapassword " + "x" * 3000 + "\n")
    (ws.memory_dir / "alias.md").symlink_to(ws.memory_dir / "2026-11-20.md")
    ws.config_path.write_text("[search]\nmax_file_bytes = 2000\n", encoding="utf-8")
    res = invoke(ws, "memory", "search", "zebrapassword", "--json", "--no-record")
    assert res.exit_code == 0, res.output
    assert "memory/big.md" in res.stderr and "over the 2000-byte limit" in res.stderr
    assert "memory/alias.md" in res.stdout  # a symlink to a file inside the workspace is read
    ws.config_path.write_text("[search]\nmax_file_bytes = 0\n", encoding="utf-8")
    bad = invoke(ws, "memory", "search", "zebrapassword", "--no-record")
    assert "max_file_bytes" in bad.output


def test_memory_md_linked_out_is_not_read(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "elsewhere.md").write_text(f"# Long-Term Memory\n\n- {SECRET}\n")
    ws.memory_md.symlink_to(tmp_path / "elsewhere.md")
    with pytest.raises(safe_read.Unreadable, match="outside the workspace"):
        safe_read.read_text(ws, ws.memory_md)
    res = invoke(ws, "memory", "search", "zebrapassword", "--json", "--no-record")
    assert SECRET not in res.stdout and "MEMORY.md" in res.stderr


def test_file_replaced_after_the_check_is_refused(ws: Workspace, tmp_path: Path) -> None:
    note = write_note(ws, "2026-11-20.md", NOTE)
    ok = safe_read.check(ws, note)
    note.unlink()
    os.mkfifo(note)
    with pytest.raises(safe_read.Unreadable):
        safe_read._open_checked("memory/2026-11-20.md", ok)


def test_index_reads_files_before_taking_the_write_lock(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No file is read while the index holds its write transaction."""
    from memcore.search import index

    write_note(ws, "2026-11-20.md", NOTE)
    conn = index.open_index(ws)
    reads_in_tx: list[bool] = []
    real = safe_read.read_checked

    def spy(*args: object, **kwargs: object) -> bytes:
        reads_in_tx.append(conn.in_transaction)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(safe_read, "read_checked", spy)
    try:
        report = index.update_index(conn, ws)
    finally:
        conn.close()
    assert report.rechunked == 1 and reads_in_tx == [False]


def _rchar() -> int:
    with open("/proc/self/io") as fh:
        return next(int(ln.split()[1]) for ln in fh if ln.startswith("rchar:"))


def test_memory_get_pages_a_long_line_with_a_cursor(ws: Workspace) -> None:
    line = "".join(f"word{i} " for i in range(40_000)) + "ünïcode end"  # ~300 kB, one line
    write_note(ws, "long.md", f"# Title\n{line}\nlast line\n")
    first = read_lines(ws, "memory/long.md", 1, 3)
    assert first["text"] == "# Title" and first["truncated"] is True
    pieces, out = [], first
    while out["nextCursor"].endswith(".2") and len(pieces) < 20:
        out = read_lines(ws, "memory/long.md", cursor=out["nextCursor"], end_line=2)
        assert len(out["text"].encode()) <= 64 * 1024
        pieces.append(out["text"])
    assert "".join(pieces) == line and out["endLine"] == 2 and len(pieces) > 4
    small = read_lines(ws, "memory/long.md", 3, 3, max_bytes=5)
    assert small["text"] == "last " and small["truncated"] is True
    rest = read_lines(ws, "memory/long.md", cursor=small["nextCursor"])
    assert rest["text"] == "line" and rest["nextCursor"] is None and rest["totalLines"] == 3
    with pytest.raises(InputError, match="max_bytes"):
        read_lines(ws, "memory/long.md", max_bytes=0)
    with pytest.raises(InputError, match="cursor"):
        read_lines(ws, "memory/long.md", cursor="nonsense")


def test_memory_get_reads_only_what_it_returns(ws: Workspace) -> None:
    with open(ws.memory_dir / "huge.md", "wb") as fh:  # 300 MB (sparse), three lines on top
        fh.write(b"one\ntwo\nthree\n")
        fh.truncate(300 * 1024 * 1024)
    before = _rchar()
    out = read_lines(ws, "memory/huge.md", 1, 3)
    read = _rchar() - before
    assert out["text"] == "one\ntwo\nthree" and out["truncated"] is False
    assert out["nextCursor"] is not None and out["sizeBytes"] == 300 * 1024 * 1024
    assert read < 256 * 1024, read
