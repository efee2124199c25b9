"""Which workspace folders changed since the last index scan, from inotify (Linux).

Before each search the index stats every markdown file of the workspace (about 5 us a file:
9 CPU-ms of a search at 1,000 notes), so that a note another process edited is never missed.
A long-lived process (the gateway, the MCP server) keeps one :class:`ScanWatch` in its
:class:`memcore.search.connections.IndexPool` instead: one inotify instance that watches the
folders a scan walked (the workspace folder with MEMORY.md, ``memory/`` and its sub-folders;
never ``memory/.dreams/``) and keeps that scan's result. The next update takes the kept result
when no event arrived for those folders since the scan, and scans again otherwise.

Why that never misses a change: the kernel queues an event in the same system call that
writes, creates, deletes, renames, truncates or touches a file of a watched folder, so a
change another process finished before a search began is in the queue when the search reads
it. A result is kept only when it is safe: every folder of the scan was watched before the
scan began (a folder seen for the first time, or replaced by another at the same path, makes
the result one-off: the next search scans again), no event arrived while the scan ran, and
every file the scan found is a plain file (not a symlink, one hard link), whose changes are
reported in the folder the scan walked. A full event queue, a watch that cannot be added (the
limit of watches) or a platform without inotify falls back to the scan on every search.
Writes through a shared memory mapping are not reported by inotify; notes are not written so.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import struct
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

# inotify(7)
IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC
MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
)
_EVENT = struct.Struct("iIII")
_READ_BYTES = 64 * 1024


def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        lib.inotify_init1.argtypes = [ctypes.c_int]
        lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):
        return None
    return lib


@dataclass
class _Entry:
    """One workspace: its folders' watch descriptors, the kept scan, and its generation (one
    more for every event that concerns it)."""

    wds: set[int] = field(default_factory=set)
    generation: int = 0
    kept: Any = None
    key: Any = None  # what else the kept scan depended on (the size cap, the kind's files)


class ScanWatch:
    """One inotify instance for the workspaces a process searches (see module doc).
    Thread-safe; :meth:`close` releases the descriptor."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lib: Any = None
        self._fd = -1
        self._state = "new"  # "open" once the instance is made on first use, "closed"
        self._entries: dict[str, _Entry] = {}
        self._owners: dict[int, set[str]] = {}  # watch descriptor -> workspaces
        self.kept_scans = 0  # updates served by a kept scan (tests and benchmarks)

    def _open(self) -> None:
        """Make the inotify instance on first use (a pool that never searches holds none;
        instances are limited per user). Called with the lock held."""
        if self._state != "new":
            return
        self._state = "open"
        self._lib = _libc()
        if self._lib is not None:
            fd = int(self._lib.inotify_init1(IN_NONBLOCK | IN_CLOEXEC))
            self._fd = fd if fd >= 0 else -1

    @property
    def available(self) -> bool:
        """Whether scans can be kept (inotify works here and :meth:`close` was not called)."""
        with self._lock:
            self._open()
            return self._fd >= 0

    def kept(self, name: str, key: Any) -> Any:
        """The scan kept for workspace ``name`` when nothing it walked changed since and it
        was made under the same ``key``; None (scan again) otherwise."""
        with self._lock:
            self._open()
            if self._fd < 0:
                return None
            self._drain()
            entry = self._entries.get(name)
            if entry is None or entry.kept is None or entry.key != key:
                return None
            self.kept_scans += 1
            return entry.kept

    def begin(self, name: str) -> int:
        """Before a scan of ``name``: the generation :meth:`keep` compares against."""
        with self._lock:
            self._open()
            if self._fd < 0:
                return -1
            self._drain()
            entry = self._entries.setdefault(name, _Entry())
            entry.kept = None
            return entry.generation

    def keep(self, name: str, generation: int, folders: list[str], scan: Any, key: Any) -> bool:
        """After a scan that began at ``generation`` and walked ``folders``: watch them, and
        keep ``scan`` if every folder was watched already and nothing changed meanwhile."""
        with self._lock:
            entry = self._entries.get(name)
            if self._fd < 0 or entry is None:
                return False
            known = True
            for folder in dict.fromkeys(folders):
                wd = self._add(folder)
                if wd < 0:
                    known = False  # unwatchable (gone already, or the limit of watches)
                    continue
                if wd not in entry.wds:
                    known = False
                    entry.wds.add(wd)
                    self._owners.setdefault(wd, set()).add(name)
            self._drain()
            if not known or entry.generation != generation:
                return False
            entry.kept, entry.key = scan, key
            return True

    def _add(self, folder: str) -> int:
        try:
            path = os.fsencode(folder)
        except (TypeError, ValueError):
            return -1
        wd = int(self._lib.inotify_add_watch(self._fd, path, MASK))
        return wd

    def _drain(self) -> None:
        """Read every queued event; each moves on the generation of the workspaces whose
        folder it concerns (a full queue: of every workspace)."""
        while True:
            try:
                data = os.read(self._fd, _READ_BYTES)
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                self._invalidate_all()
                return
            if not data:
                return
            off = 0
            while off + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, off)
                off += _EVENT.size + length
                if mask & IN_Q_OVERFLOW or wd < 0:
                    self._invalidate_all()
                    continue
                owners = self._owners.get(wd, ())
                for name in owners:
                    entry = self._entries[name]
                    entry.generation += 1
                    entry.kept = None
                if mask & IN_IGNORED:  # the folder is gone (or unwatched): forget its number
                    for name in self._owners.pop(wd, ()):
                        self._entries[name].wds.discard(wd)

    def _invalidate_all(self) -> None:
        for entry in self._entries.values():
            entry.generation += 1
            entry.kept = None

    def close(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, -1
            self._state = "closed"
            self._entries.clear()
            self._owners.clear()
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
