"""The workspace lock: memcore processes exclude each other, and so do memcore and OpenClaw
(which creates ``short-term-promotion.lock`` exclusively with ``<pid>:<ms>``)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from memcore.errors import LockBusy
from memcore.workspace.core import Workspace, pid_alive, shared_lock_owner


def _openclaw_holder(ws: Workspace) -> subprocess.Popen[str]:
    """A live process holding the lock the way OpenClaw does."""
    code = (
        "import os, sys, time\n"
        "fd = os.open(sys.argv[1], os.O_CREAT | os.O_EXCL | os.O_WRONLY)\n"
        "os.write(fd, f'{os.getpid()}:{int(time.time() * 1000)}\\n'.encode()); os.close(fd)\n"
        "print('held', flush=True); sys.stdin.readline(); os.unlink(sys.argv[1])\n"
    )
    ws.ensure_dreams_dir()
    p = subprocess.Popen(
        [sys.executable, "-c", code, str(ws.lock_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert p.stdout is not None and p.stdout.readline().strip() == "held"
    return p


def test_memcore_waits_for_a_live_openclaw_holder(ws: Workspace) -> None:
    holder = _openclaw_holder(ws)
    try:
        with pytest.raises(LockBusy, match=f"process {holder.pid}"), ws.lock(timeout=0.3):
            pass
        assert holder.poll() is None  # its lock file was not stolen
        assert ws.lock_path.read_text().startswith(f"{holder.pid}:")
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(10)
        holder.stdout.close()  # type: ignore[union-attr]
    with ws.lock(timeout=1):
        assert ws.lock_path.read_text().startswith(f"{os.getpid()}:")
    assert not ws.lock_path.exists()  # removed on release, as OpenClaw expects


def test_openclaw_sees_memcore_as_a_live_holder(ws: Workspace) -> None:
    with ws.lock(timeout=1):
        pid, _ = shared_lock_owner(ws.lock_path)
        # From another process's point of view the owner is alive: OpenClaw would wait.
        probe = subprocess.run(
            [sys.executable, "-c", f"import psutil, sys; sys.exit(not psutil.pid_exists({pid}))"],
            check=False,
        )
        assert pid == os.getpid() and probe.returncode == 0
        with pytest.raises(FileExistsError):
            os.open(ws.lock_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)


def test_dead_owner_is_cleared_at_once(ws: Workspace) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    ws.ensure_dreams_dir()
    ws.lock_path.write_text(f"{dead.stdout.strip()}:1700000000000\n")
    start = time.monotonic()
    with ws.lock(timeout=5):
        assert ws.lock_path.read_text().startswith(f"{os.getpid()}:")
    assert time.monotonic() - start < 2


def test_anonymous_lock_file_is_stale_only_after_sixty_seconds(ws: Workspace) -> None:
    ws.ensure_dreams_dir()
    ws.lock_path.write_text("")  # e.g. left by an older memcore, or an OpenClaw mid-create
    with pytest.raises(LockBusy), ws.lock(timeout=0.2):
        pass
    old = time.time() - 120
    os.utime(ws.lock_path, (old, old))
    with ws.lock(timeout=1):
        pass
    assert not ws.lock_path.exists()


def test_reentrant_and_threads_exclude_each_other(ws: Workspace) -> None:
    order: list[str] = []
    with ws.lock(timeout=1):
        with ws.lock(timeout=1):
            order.append("nested")
        assert ws.lock_path.exists()  # still held by the outer level

        def other() -> None:
            with ws.lock(timeout=5):
                order.append("thread")

        t = threading.Thread(target=other)
        t.start()
        time.sleep(0.3)
        order.append("outer-end")
    t.join(10)
    assert order == ["nested", "outer-end", "thread"]
    assert not ws.lock_path.exists()


def test_lock_owner_checks_never_signal_a_process(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Live and dead owners, and a dead owner's temp file, are told apart without memcore
    calling ``os.kill`` (``os.kill(pid, 0)`` terminates the process on Windows). psutil's own
    POSIX probe, signal 0, delivers nothing and is let through; any real signal fails."""
    real_kill = os.kill
    sent: list[tuple[str, int, int]] = []

    def no_signals(pid: int, sig: int) -> None:
        caller = sys._getframe(1).f_code.co_filename
        sent.append((caller, pid, sig))
        if sig != 0 or "psutil" not in caller:
            raise AssertionError(f"signal {sig} sent to process {pid} from {caller}")
        real_kill(pid, sig)

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    holder = _openclaw_holder(ws)
    monkeypatch.setattr(os, "kill", no_signals)
    try:
        assert shared_lock_owner(ws.lock_path) == (holder.pid, False)
        assert pid_alive(holder.pid) and not pid_alive(int(dead))
        with pytest.raises(LockBusy, match=f"process {holder.pid}"), ws.lock(timeout=0.2):
            pass
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(10)
        holder.stdout.close()  # type: ignore[union-attr]
    leftover = ws.lock_path.with_name(f".{ws.lock_path.name}.{dead}.0123abcd.tmp")
    leftover.write_text(f"{dead}:1700000000000\n")
    ws.lock_path.write_text(f"{dead}:1700000000000\n")  # a dead owner's lock file
    with ws.lock(timeout=2):
        assert ws.lock_path.read_text().startswith(f"{os.getpid()}:")
    assert not leftover.exists()  # the dead owner's temp file was cleaned up
    assert all("psutil" in caller and sig == 0 for caller, _, sig in sent)
