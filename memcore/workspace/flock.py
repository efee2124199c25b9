"""The kernel half of the workspace lock: ``flock(2)`` on a file, re-entrant within a thread.

The lock belongs to an open file description, so two processes, and two threads of one process
(each thread opens the file itself), keep apart, and the kernel drops it when its holder dies.
Within one thread a second ``acquire`` of the same path only counts up. It is the same kernel
lock filelock takes, so the two interoperate (``memory status`` probes the lock with filelock);
it lives here because importing filelock took about 13 ms of every ``memory record`` process.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time

__all__ = ["acquire", "release"]

#: How often a waiter tries again, in seconds.
POLL_SECONDS = 0.05

_local = threading.local()


def _held() -> dict[str, list[int]]:
    """This thread's locks: path -> [fd, depth]."""
    table: dict[str, list[int]] | None = getattr(_local, "table", None)
    if table is None:
        table = _local.table = {}
    return table


def acquire(path: str, timeout: float) -> int:
    """Take the lock on ``path`` (created when missing) and return the depth: 1 for the
    outermost hold of this thread. ``timeout`` is in seconds (0: one try; negative: no limit);
    raise TimeoutError when the lock is not free in time."""
    path = os.path.realpath(path)  # one hold however the workspace was named
    table = _held()
    entry = table.get(path)
    if entry is not None:
        entry[1] += 1
        return entry[1]
    deadline = None if timeout < 0 else time.monotonic() + timeout
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError(path) from None
            time.sleep(POLL_SECONDS if left is None else min(POLL_SECONDS, left))
            continue
        except BaseException:
            os.close(fd)
            raise
        if _same_file(fd, path):
            table[path] = [fd, 1]
            return 1
        os.close(fd)  # the file was replaced or removed meanwhile: lock the one at ``path``


def release(path: str) -> None:
    """Drop one hold of ``path``; the kernel lock goes with the outermost."""
    table = _held()
    entry = table[os.path.realpath(path)]
    entry[1] -= 1
    if entry[1] == 0:
        del table[os.path.realpath(path)]
        try:
            fcntl.flock(entry[0], fcntl.LOCK_UN)
        finally:
            os.close(entry[0])


def _same_file(fd: int, path: str) -> bool:
    try:
        at_path = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (at_path.st_dev, at_path.st_ino)


def _forget_after_fork() -> None:
    # A child shares its parent's open file descriptions; unlocking one would free the
    # parent's lock, so the child only closes its copies.
    table: dict[str, list[int]] | None = getattr(_local, "table", None)
    if table:
        for fd, _depth in table.values():
            os.close(fd)
        table.clear()


os.register_at_fork(after_in_child=_forget_after_fork)
