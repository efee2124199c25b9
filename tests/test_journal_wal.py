"""Write-ahead runs: intent and preimages before any write, rollback of an unfinished run by
the next lock holder (killed real subprocesses), in-process rollback on a write error, and a
lock file that always names its owner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memcore.errors import WorkspaceError
from memcore.journal import history, runs, wal
from memcore.workspace.core import Workspace

NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)


def _commit(ws: Workspace, writes: dict[Path, bytes | None], kind: str = "test") -> str:
    with ws.lock(), history.connect(ws) as conn:
        run_id = runs.new_run_id(NOW)
        wal.commit_run(ws, conn, wal.RunSpec(run_id, kind, kind, NOW), writes)
    return run_id


def _status(ws: Workspace, run_id: str) -> str:
    with history.connect(ws) as conn:
        row = runs.get_run(conn, run_id)
        assert row is not None
        return str(row["status"])


def test_a_run_writes_its_files_keeps_both_images_and_leaves_no_marker(ws: Workspace) -> None:
    ws.memory_md.write_bytes(b"# M\n\n- one\n")
    note = ws.memory_dir / "2026-11-29.md"
    rid = _commit(ws, {ws.memory_md: b"# M\n\n- one\n- two\n", note: b"new note\n"})
    assert ws.memory_md.read_bytes() == b"# M\n\n- one\n- two\n"
    assert note.read_bytes() == b"new note\n"
    assert not ws.pending_run_path.exists()
    assert _status(ws, rid) == "applied"
    shown = history.show_run(ws, rid, diff=True)
    files = {f["path"]: f for f in shown["fileImages"]}
    assert set(files) == {"MEMORY.md", "memory/2026-11-29.md"}
    assert files["memory/2026-11-29.md"]["beforeSha1"] is None  # did not exist before
    assert "+- two" in files["MEMORY.md"]["diff"]
    vs = history.versions(ws)
    assert [v["role"] for v in vs] == ["after", "before"] and vs[0]["current"]


def test_a_write_error_rolls_the_run_back_in_process(ws: Workspace) -> None:
    ws.memory_md.write_bytes(b"# M\n")
    blocker = ws.root / "notadir"
    blocker.write_bytes(b"x")
    with pytest.raises(WorkspaceError, match="was rolled back, nothing changed"):
        _commit(ws, {ws.memory_md: b"# M\n- changed\n", blocker / "f.md": b"y"})
    assert ws.memory_md.read_bytes() == b"# M\n"
    assert not ws.pending_run_path.exists()
    assert [r["status"] for r in history.list_runs(ws)] == ["rolled_back"]


_KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from datetime import UTC, datetime
    from pathlib import Path
    from memcore.journal import history, runs, wal
    from memcore.workspace.core import Workspace

    ws = Workspace(Path(sys.argv[1]))
    point = sys.argv[2]
    real_write = wal._write
    calls = []

    def write(path, data):
        calls.append(path)
        if point == "before-first-write" or (point == "after-first-write" and len(calls) == 2):
            os.kill(os.getpid(), signal.SIGKILL)
        real_write(path, data)

    wal._write = write

    def finish(conn):
        if point == "before-done":
            os.kill(os.getpid(), signal.SIGKILL)

    now = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
    with ws.lock(), history.connect(ws) as conn:
        wal.commit_run(
            ws, conn, wal.RunSpec("killed-run", "test", "test", now),
            {ws.memory_md: b"# M\\n- after\\n", ws.archive_path: b"archive after\\n"},
            finish=finish,
        )
    """
)


@pytest.mark.parametrize("point", ["before-first-write", "after-first-write", "before-done"])
def test_a_run_killed_at_any_point_is_rolled_back_by_the_next_lock_holder(
    ws: Workspace, point: str
) -> None:
    ws.memory_md.write_bytes(b"# M\n- before\n")
    ws.ensure_dreams_dir()
    proc = subprocess.run(
        [sys.executable, "-c", _KILLER, str(ws.root), point], capture_output=True, timeout=60
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert ws.pending_run_path.exists()
    owner = ws.lock_path.read_bytes()  # the dead process's lock names its owner
    assert owner.split(b":")[0].isdigit()
    with ws.lock(timeout=5):
        pass  # any lock holder recovers first
    assert ws.memory_md.read_bytes() == b"# M\n- before\n"
    assert not ws.archive_path.exists()
    assert not ws.pending_run_path.exists() and not ws.lock_path.exists()
    assert _status(ws, "killed-run") == "rolled_back"
    leftovers = [n for n in os.listdir(ws.dreams_dir) if n.endswith(".tmp")]
    assert leftovers == []


def test_recovery_leaves_a_file_someone_else_changed_since(ws: Workspace) -> None:
    ws.memory_md.write_bytes(b"# M\n- before\n")
    ws.ensure_dreams_dir()
    subprocess.run(
        [sys.executable, "-c", _KILLER, str(ws.root), "before-done"],
        capture_output=True,
        timeout=60,
    )
    ws.memory_md.write_bytes(b"# M\n- a human wrote this\n")
    with ws.lock(timeout=5):
        pass
    assert ws.memory_md.read_bytes() == b"# M\n- a human wrote this\n"
    assert not ws.archive_path.exists()  # the run's own write is rolled back
    assert _status(ws, "killed-run") == "rolled_back"


def test_the_lock_file_is_never_ownerless(ws: Workspace) -> None:
    with ws.lock():
        data = ws.lock_path.read_bytes()
        pid, ms = data.decode().strip().split(":")
        assert int(pid) == os.getpid() and int(ms) > 0
        assert [n for n in os.listdir(ws.dreams_dir) if n.endswith(".tmp")] == []
    assert not ws.lock_path.exists()


def test_a_dead_processes_owner_temp_file_is_cleaned_up(ws: Workspace) -> None:
    ws.ensure_dreams_dir()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(dead.stdout)
    stale = ws.dreams_dir / f".short-term-promotion.lock.{pid}.deadbeef.tmp"
    stale.write_bytes(f"{pid}:1\n".encode())
    with ws.lock():
        pass
    assert not stale.exists()


def test_old_images_are_pruned_to_keep_versions(ws: Workspace) -> None:
    ws.config_path.write_text("[journal]\nkeep_versions = 3\n", encoding="utf-8")
    ws.memory_md.write_bytes(b"v0\n")
    ids = [_commit(ws, {ws.memory_md: f"v{i}\n".encode()}) for i in range(1, 7)]
    vs = history.versions(ws)
    assert len(vs) == 3 and vs[0]["current"]
    with history.connect(ws) as conn:
        kept = [wal.has_blob(conn, wal.file_images(conn, r)[0].before_sha1) for r in ids]
        assert kept == [False, False, False, True, True, True]


def test_bad_keep_versions_fails_before_anything_is_written(ws: Workspace) -> None:
    from memcore.errors import ConfigError

    ws.config_path.write_text("[journal]\nkeep_versions = 0\n", encoding="utf-8")
    ws.memory_md.write_bytes(b"v0\n")
    with pytest.raises(ConfigError, match=r"\[journal\] keep_versions = 0 is out of range"):
        _commit(ws, {ws.memory_md: b"v1\n"})
    assert ws.memory_md.read_bytes() == b"v0\n"


def test_dream_apply_after_a_kill_reports_from_the_rolled_back_state(ws: Workspace) -> None:
    from click.testing import CliRunner

    from memcore.cli import cli

    body = "# M\n\n- The cache TTL is 300 seconds.\n- The cache TTL is 300 seconds!\n"
    ws.memory_md.write_bytes(body.encode())
    ws.ensure_dreams_dir()
    killer = _KILLER.replace('b"# M\\n- after\\n"', 'b"# M\\n- half-done run\\n"')
    assert killer != _KILLER
    proc = subprocess.run(
        [sys.executable, "-c", killer, str(ws.root), "before-done"],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL
    assert b"half-done" in ws.memory_md.read_bytes()  # on disk until the next lock holder
    res = CliRunner().invoke(
        cli, ["-w", str(ws.root), "dream", "--apply", "--yes", "--only", "merge"]
    )
    assert res.exit_code == 0, res.output
    assert "half-done" not in res.stdout and "Dream complete" in res.stdout
    assert ws.memory_md.read_text(encoding="utf-8") == "# M\n\n- The cache TTL is 300 seconds.\n"
    assert _status(ws, "killed-run") == "rolled_back"


@pytest.mark.parametrize("damage", ["corrupt", "missing"])
def test_a_killed_run_whose_preimage_is_lost_is_marked_interrupted_once(
    ws: Workspace, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    import hashlib
    import sqlite3

    ws.memory_md.write_bytes(b"# M\n- before\n")
    ws.ensure_dreams_dir()
    proc = subprocess.run(
        [sys.executable, "-c", _KILLER, str(ws.root), "before-done"],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    sha = hashlib.sha1(b"# M\n- before\n").hexdigest()
    conn = sqlite3.connect(ws.db_path)
    if damage == "corrupt":
        conn.execute("UPDATE journal_blobs SET data = x'00ff00ff' WHERE sha1 = ?", (sha,))
    else:
        conn.execute("DELETE FROM journal_blobs WHERE sha1 = ?", (sha,))
    conn.commit()
    conn.close()
    with ws.lock(timeout=5):  # no failure, and none on any later command
        pass
    assert ws.memory_md.read_bytes() == b"# M\n- after\n"  # whole, as the run wrote it
    assert not ws.archive_path.exists()  # its preimage (absent) is known: rolled back
    assert _status(ws, "killed-run") == "interrupted"
    assert not ws.pending_run_path.exists()
    assert "cannot be rolled back" in caplog.text and "MEMORY.md" in caplog.text
    _commit(ws, {ws.memory_md: b"# M\n- next\n"})
    assert ws.memory_md.read_bytes() == b"# M\n- next\n"


_KILL_AFTER_DONE = textwrap.dedent(
    """
    import os, signal, sys
    from datetime import UTC, datetime
    from pathlib import Path
    from memcore.journal import history, wal
    from memcore.workspace.core import Workspace

    ws = Workspace(Path(sys.argv[1]))
    done = []
    real_unlink = os.unlink

    def unlink(path, *a, **k):
        if done:  # the run is marked applied; its kept old files are not yet removed
            os.kill(os.getpid(), signal.SIGKILL)
        return real_unlink(path, *a, **k)

    wal.os.unlink = unlink
    now = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
    with ws.lock(), history.connect(ws) as conn:
        wal.commit_run(
            ws, conn, wal.RunSpec("done-run", "test", "test", now),
            {ws.memory_md: b"# M\\n- after\\n"}, finish=lambda c: done.append(1),
        )
    """
)


def test_a_run_killed_after_it_was_marked_done_leaves_no_kept_file(ws: Workspace) -> None:
    ws.memory_md.write_bytes(b"# M\n- before\n")
    ws.ensure_dreams_dir()
    proc = subprocess.run(
        [sys.executable, "-c", _KILL_AFTER_DONE, str(ws.root)], capture_output=True, timeout=60
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert [n for n in os.listdir(ws.root) if n.endswith(".prev.tmp")]  # the kept old file
    with ws.lock(timeout=5):
        pass
    assert ws.memory_md.read_bytes() == b"# M\n- after\n"  # the run happened
    assert _status(ws, "done-run") == "applied"
    assert [n for n in os.listdir(ws.root) if n.endswith(".tmp")] == []
    assert not ws.pending_run_path.exists()


def test_a_marker_that_cannot_be_removed_leaves_the_run_applied_and_the_next_lock_tidies(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The folder turning read-only between the last file write and the marker's removal:
    # the files and the journal are final, so the command must succeed, not fail.
    ws.memory_md.write_bytes(b"# M\n- one\n")
    real_unlink = os.unlink

    def refuse_marker(path: str | os.PathLike[str], *a: object, **k: object) -> None:
        if Path(path) == ws.pending_run_path:
            raise OSError(30, "Read-only file system", str(path))
        real_unlink(path, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "unlink", refuse_marker)
    rid = _commit(ws, {ws.memory_md: b"# M\n- one\n- two\n"})
    assert ws.pending_run_path.exists()
    monkeypatch.setattr(os, "unlink", real_unlink)
    assert _status(ws, rid) == "applied"
    with ws.lock(timeout=5):
        pass  # the next lock holder finds a settled run: nothing is rolled back
    assert ws.memory_md.read_bytes() == b"# M\n- one\n- two\n"
    assert _status(ws, rid) == "applied"
    assert not ws.pending_run_path.exists()
