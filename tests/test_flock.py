"""The kernel lock under the workspace lock: re-entrant in a thread, exclusive across threads
and processes, the same lock filelock takes, and never fooled by a replaced lock file."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

from memcore.workspace import flock


def test_reentrant_within_a_thread_exclusive_across_threads(tmp_path: Path) -> None:
    path = str(tmp_path / "x.lock")
    assert flock.acquire(path, 0) == 1
    assert flock.acquire(path, 0) == 2
    result: list[str] = []

    def other() -> None:
        try:
            flock.acquire(path, 0.1)
        except TimeoutError:
            result.append("busy")
        else:
            result.append("took it")
            flock.release(path)

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert result == ["busy"]
    flock.release(path)
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert result == ["busy", "busy"], "the outer hold is still there"
    flock.release(path)
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert result == ["busy", "busy", "took it"]


def test_the_same_kernel_lock_as_filelock(tmp_path: Path) -> None:
    path = str(tmp_path / "x.lock")
    flock.acquire(path, 0)
    with pytest.raises(Timeout):
        FileLock(path).acquire(timeout=0)
    flock.release(path)
    with FileLock(path, timeout=0), pytest.raises(TimeoutError):
        flock.acquire(path, 0)


def test_another_process_waits_then_times_out(tmp_path: Path) -> None:
    path = str(tmp_path / "x.lock")
    flock.acquire(path, 0)
    code = (
        "import sys; from memcore.workspace import flock\n"
        "try:\n flock.acquire(sys.argv[1], 0.2)\nexcept TimeoutError:\n print('busy')\n"
        "else:\n print('took it')\n"
    )
    run = [sys.executable, "-c", code, path]
    assert subprocess.run(run, capture_output=True, text=True).stdout.strip() == "busy"
    flock.release(path)
    assert subprocess.run(run, capture_output=True, text=True).stdout.strip() == "took it"


def test_one_hold_however_the_path_is_spelled(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "alias")
    assert flock.acquire(str(tmp_path / "real" / "x.lock"), 0) == 1
    assert flock.acquire(str(tmp_path / "alias" / "x.lock"), 0) == 2
    flock.release(str(tmp_path / "alias" / "x.lock"))
    flock.release(str(tmp_path / "real" / "x.lock"))
    with FileLock(str(tmp_path / "real" / "x.lock"), timeout=0):
        pass  # free again


def test_a_removed_lock_file_is_not_held(tmp_path: Path) -> None:
    """A holder whose file was unlinked holds nothing others see; the next taker locks the
    file now at the path, and a hold never sits on a file that is gone."""
    path = str(tmp_path / "x.lock")
    flock.acquire(path, 0)
    os.unlink(path)
    with FileLock(path, timeout=0):
        pass  # a new file, free
    flock.release(path)
    assert flock.acquire(path, 0) == 1
    assert os.path.exists(path)
    flock.release(path)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_free_the_parents_lock(tmp_path: Path) -> None:
    path = str(tmp_path / "x.lock")
    flock.acquire(path, 0)
    pid = os.fork()
    if pid == 0:  # the child: it holds nothing, so its own take is a fresh one that waits
        try:
            flock.acquire(path, 0)
        except TimeoutError:
            os._exit(0)
        os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with pytest.raises(Timeout):
        FileLock(path).acquire(timeout=0)
    flock.release(path)
