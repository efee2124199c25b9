"""What memcore may read in a workspace, and reading it safely: the one gate every reader uses.

A markdown file is read only when it is a regular file, lies inside the workspace once every
symlink is resolved (a link to a file elsewhere in the workspace is fine; one to ``/etc/passwd``
is not), and is no larger than ``[search] max_file_bytes`` (default 5 MB; MEMORY.md, which
promotion and consolidation rewrite whole, has the larger :data:`MEMORY_MD_MAX_BYTES`).
FIFOs, sockets and devices are refused before they are opened (``lstat``/``stat``); the file
is opened with ``O_NONBLOCK | O_NOFOLLOW`` on its resolved path and checked again with
``fstat``, so a file swapped between the check and the open is refused too. Reads are
bounded: never more than the cap, or than the window a caller asks for (:func:`read_window`).

The index scan, search, ``memory_get``, promotion, consolidation and the health report all come
through here; a refused file is skipped and named (``Unreadable`` carries the reason), it never
hangs or fails a whole command.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from memcore.errors import Unreadable
from memcore.workspace.core import MAX_TEXT_BYTES, Workspace

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "MEMORY_MD_MAX_BYTES",
    "Readable",
    "Unreadable",
    "check",
    "decode_text",
    "max_file_bytes",
    "read_bytes",
    "read_checked",
    "read_text",
    "read_window",
    "real_root",
]

DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
#: The cap for MEMORY.md read whole by the commands that rewrite it (promotion, consolidation,
#: status): they must see all of it, so the search cap does not apply; this one does.
MEMORY_MD_MAX_BYTES = MAX_TEXT_BYTES
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
_READ_CHUNK = 1 << 20


@dataclass(frozen=True)
class Readable:
    """A file that passed :func:`check`: its resolved path and the stat of that file."""

    path: str
    st: os.stat_result


def max_file_bytes(ws: Workspace) -> int:
    """``[search] max_file_bytes`` of the workspace (ConfigError with the key when invalid)."""
    from memcore.workspace.config import get_number, load_config

    if not ws.config_path.exists():
        return DEFAULT_MAX_FILE_BYTES
    value = get_number(
        load_config(ws), "search", "max_file_bytes", DEFAULT_MAX_FILE_BYTES, lo=1, integer=True
    )
    return int(value)


def real_root(ws: Workspace) -> str:
    """The workspace folder with every symlink resolved (what "inside" is measured against)."""
    return os.path.realpath(ws.root)


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def check(
    ws: Workspace,
    path: Path | str,
    *,
    max_bytes: int | None = None,
    root: str | None = None,
    lst: os.stat_result | None = None,
    parents_checked: bool = False,
) -> Readable:
    """Decide whether ``path`` (absolute, or relative to the workspace) may be read.

    Returns the resolved path and its stat; raises :class:`Unreadable` with the reason, or
    FileNotFoundError when nothing is there. ``max_bytes`` defaults to the workspace's cap.
    ``root`` (:func:`real_root`), ``lst`` (the path's lstat) and ``parents_checked`` (every
    folder above it is known to be a real folder inside the workspace) let a scan of many
    files skip work it already did; the answer is the same.
    """
    p = os.fspath(path)
    full = p if os.path.isabs(p) else os.path.join(ws.root, p)

    def shown() -> str:  # only for a refusal: a scan of 1,000 files checks 1,000 times
        return ws.rel(full) if not parents_checked else os.path.relpath(full, ws.root)

    root = root if root is not None else real_root(ws)
    cap = max_bytes if max_bytes is not None else max_file_bytes(ws)
    if lst is None:
        lst = os.lstat(full)
    if parents_checked and not stat.S_ISLNK(lst.st_mode):
        real, st = full, lst
    else:
        real = os.path.realpath(full)
        st = os.stat(real)
    if stat.S_ISDIR(st.st_mode):
        raise Unreadable(shown(), "a directory, not a markdown file")
    if not stat.S_ISREG(st.st_mode):
        raise Unreadable(shown(), "not a regular file (a FIFO, socket or device)")
    if real is not full and not _inside(real, root):
        raise Unreadable(shown(), "a symlink that leads outside the workspace")
    if st.st_size > cap:
        raise Unreadable(
            shown(), f"{st.st_size} bytes, over the {cap}-byte limit ([search] max_file_bytes)"
        )
    return Readable(real, st)


def _open_checked(shown: str, ok: Readable) -> int:
    try:
        fd = os.open(ok.path, _OPEN_FLAGS)
    except PermissionError:
        raise Unreadable(shown, "not readable (permission denied)") from None
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise Unreadable(shown, f"cannot be opened: {exc.strerror or exc}") from None
    fst = os.fstat(fd)
    if not stat.S_ISREG(fst.st_mode) or (fst.st_dev, fst.st_ino) != (ok.st.st_dev, ok.st.st_ino):
        os.close(fd)
        raise Unreadable(shown, "replaced while it was opened; try again")
    return fd


def read_bytes(ws: Workspace, path: Path | str, *, max_bytes: int | None = None) -> bytes:
    """The whole file, after :func:`check`; never more than the cap (a file growing past it
    while read is refused)."""
    cap = max_bytes if max_bytes is not None else max_file_bytes(ws)
    ok = check(ws, path, max_bytes=cap)
    shown = ws.rel(path if os.path.isabs(os.fspath(path)) else ws.root / path)
    return read_checked(shown, ok, cap)


def read_checked(shown: str, ok: Readable, cap: int) -> bytes:
    """The whole file that :func:`check` returned ``ok`` for (``shown`` names it in a refusal):
    a scan that checked many files reads each without resolving it again. The open still
    refuses a file replaced since the check (another inode, a symlink), and the read is
    bounded by ``cap``."""
    fd = _open_checked(shown, ok)
    try:
        parts: list[bytes] = []
        total = 0
        while True:
            try:
                part = os.read(fd, min(_READ_CHUNK, cap + 1 - total))
            except OSError as exc:
                raise Unreadable(shown, f"cannot be read: {exc.strerror or exc}") from None
            if not part:
                break
            total += len(part)
            if total > cap:
                raise Unreadable(shown, f"grew past the {cap}-byte limit while it was read")
            parts.append(part)
        return b"".join(parts)
    finally:
        os.close(fd)


def decode_text(shown: str, data: bytes) -> str:
    """``data`` as UTF-8 markdown text; Unreadable for NUL bytes or invalid UTF-8."""
    if b"\x00" in data:
        raise Unreadable(shown, "contains NUL bytes; expected UTF-8 markdown text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(
            shown, f"not valid UTF-8 (byte {exc.start}); expected UTF-8 markdown text"
        ) from None


def read_text(ws: Workspace, path: Path | str, *, max_bytes: int | None = None) -> str:
    """The file as UTF-8 text, through :func:`check` and the bounded read."""
    data = read_bytes(ws, path, max_bytes=max_bytes)
    return decode_text(ws.rel(path if os.path.isabs(os.fspath(path)) else ws.root / path), data)


def read_window(
    ws: Workspace, path: Path | str, offset: int, length: int
) -> tuple[bytes, os.stat_result]:
    """At most ``length`` bytes from byte ``offset`` (and the file's stat), reading only those.

    The size cap does not apply: a caller that pages through a file reads a bounded window of
    it whatever its size. Every other rule of :func:`check` does."""
    ok = check(ws, path, max_bytes=1 << 62)
    shown = ws.rel(path if os.path.isabs(os.fspath(path)) else ws.root / path)
    fd = _open_checked(shown, ok)
    try:
        parts: list[bytes] = []
        got = 0
        while got < length:
            try:
                part = os.pread(fd, min(_READ_CHUNK, length - got), offset + got)
            except OSError as exc:
                raise Unreadable(shown, f"cannot be read: {exc.strerror or exc}") from None
            if not part:
                break
            parts.append(part)
            got += len(part)
        return b"".join(parts), ok.st
    finally:
        os.close(fd)
