"""Workspace paths, atomic writes, the workspace lock and daily-note discovery.

Files are the source of truth; everything memcore owns lives under ``memory/.dreams/``.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memcore.errors import LockBusy, WorkspaceError

DAILY_NOTE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")
#: A daily note's file name: ``YYYY-MM-DD.md`` or a split day ``YYYY-MM-DD-HHMM.md``.
DAILY_NAME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:-\d{4})?\.md$")
#: Folders under memory/ whose dated files are not daily notes (OpenClaw's dreaming reports,
#: copies of other tools' memory); hidden folders (memory/.dreams/) never hold daily notes.
NOT_DAILY_FOLDERS = frozenset({"dreaming", "imports"})
DEFAULT_LOCK_TIMEOUT = 10.0


@dataclass(frozen=True)
class Workspace:
    """An agent workspace: MEMORY.md, memory/ and memcore's own memory/.dreams/.

    ``state`` moves memcore's own folder (recall store, journal, index, lock, memcore.toml
    unless the root has one) out of a folder another tool owns (a Claude Code, Codex or
    Hermes memory folder: :mod:`memcore.workspace.kinds`)."""

    root: Path
    state: Path | None = field(default=None, compare=False)

    @property
    def memory_md(self) -> Path:
        return self.root / "MEMORY.md"

    @property
    def memory_dir(self) -> Path:
        return self.root / "memory"

    @property
    def dreams_dir(self) -> Path:
        if self.state is not None:
            return self.state
        return self.memory_dir / ".dreams"

    @property
    def store_path(self) -> Path:
        return self.dreams_dir / "short-term-recall.json"

    @property
    def lock_path(self) -> Path:
        return self.dreams_dir / "short-term-promotion.lock"

    @property
    def db_path(self) -> Path:
        return self.dreams_dir / "memcore.sqlite"

    @property
    def config_path(self) -> Path:
        own = self.root / "memcore.toml"
        if self.state is not None and not own.exists():
            return self.state / "memcore.toml"
        return own

    @property
    def archive_path(self) -> Path:
        return self.dreams_dir / "archive.md"

    def rel(self, path: Path | str) -> str:
        """Workspace-relative POSIX path of ``path``."""
        p = Path(path)
        try:
            return p.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return p.as_posix()

    def ensure_dreams_dir(self) -> Path:
        self.dreams_dir.mkdir(parents=True, exist_ok=True)
        return self.dreams_dir

    def daily_notes(self) -> list[Path]:
        """Daily notes, oldest first: ``memory/YYYY-MM-DD.md``, split days
        ``memory/YYYY-MM-DD-HHMM.md`` and notes in sub-folders ``memory/<sub>/YYYY-MM-DD.md``
        (see :func:`is_daily_note_path`); ordered by file name, then path."""
        if not self.memory_dir.is_dir():
            return []
        found: list[Path] = []
        for dirpath, dirnames, filenames in os.walk(self.memory_dir):
            dirnames[:] = sorted(
                d
                for d in dirnames
                if not d.startswith(".")
                and not (Path(dirpath) == self.memory_dir and d in NOT_DAILY_FOLDERS)
            )
            for name in filenames:
                p = Path(dirpath) / name
                if DAILY_NAME_RE.match(name) and p.is_file():
                    found.append(p)
        return sorted(found, key=lambda p: (p.name, p.as_posix()))

    def markdown_files(self) -> list[Path]:
        """MEMORY.md and every markdown file under memory/ except memory/.dreams/."""
        files: list[Path] = []
        if self.memory_md.is_file():
            files.append(self.memory_md)
        if self.memory_dir.is_dir():
            for dirpath, dirnames, filenames in os.walk(self.memory_dir):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if name.endswith(".md"):
                        files.append(Path(dirpath) / name)
        return files

    @property
    def flock_path(self) -> Path:
        return self.dreams_dir / "memcore.lock"

    @property
    def pending_run_path(self) -> Path:
        """Marker of a write-ahead run that may not have finished (see memcore.journal.wal):
        created before a run's intent is committed, removed after it is marked done."""
        return self.dreams_dir / "journal.pending"

    @contextlib.contextmanager
    def lock(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the workspace lock; raise LockBusy when it is not free within ``timeout``
        seconds (default: ``$MEMCORE_LOCK_TIMEOUT``, else 10).

        Two layers: a kernel lock (:mod:`memcore.workspace.flock`) on
        ``memory/.dreams/memcore.lock`` keeps memcore processes and threads apart and vanishes
        when a holder dies; under it memcore also takes OpenClaw's lock,
        ``short-term-promotion.lock`` created exclusively with ``<pid>:<epochMs>``, so an
        OpenClaw gateway on the same workspace waits for memcore and memcore waits for it.
        Re-entrant within a thread.
        """
        from memcore.workspace import flock

        if timeout is None:
            timeout = lock_timeout_default()
        deadline = time.monotonic() + timeout
        self.ensure_dreams_dir()
        kernel_lock = str(self.flock_path)
        try:
            depth = flock.acquire(kernel_lock, timeout)
        except TimeoutError:
            raise LockBusy(
                f"another memcore run holds the lock {self.flock_path} "
                f"(waited {timeout:g}s); try again later"
            ) from None
        outer = depth == 1
        try:
            token = _take_shared_lock(self.lock_path, deadline, timeout) if outer else None
            try:
                if outer and self.pending_run_path.exists():
                    for hook in LOCK_RECOVERY_HOOKS:
                        hook(self)
                yield
            finally:
                if token is not None:
                    _drop_shared_lock(self.lock_path, token)
        finally:
            flock.release(kernel_lock)


STALE_LOCK_SECONDS = 60.0
_LOCK_OWNER_RE = re.compile(rb"^(\d+):")
#: Called, lock held, when a run may have been interrupted (``Workspace.pending_run_path``
#: exists). The journal registers its recovery here (``memcore/__init__.py``), so the first
#: command to take the lock after a kill rolls the unfinished run back before doing anything.
LOCK_RECOVERY_HOOKS: list[Callable[[Workspace], None]] = []


def shared_lock_owner(path: Path) -> tuple[int | None, bool]:
    """(pid, stale) of OpenClaw's lock file at ``path``: stale when its owner is known dead,
    or when its content names no owner and it is older than 60 s (OpenClaw's rule)."""
    try:
        data = path.read_bytes()
        age = time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return None, True
    m = _LOCK_OWNER_RE.match(data)
    if m is None:
        return None, age > STALE_LOCK_SECONDS
    pid = int(m.group(1))
    if pid == os.getpid():
        return pid, True  # this process holds the kernel lock, so no thread of ours holds it
    return pid, not pid_alive(pid)


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (a process of another user counts). Asks the OS
    through psutil and never sends a signal: ``os.kill(pid, 0)`` would terminate the process
    on Windows."""
    import psutil  # imported here: only lock contention needs it

    return pid > 0 and psutil.pid_exists(pid)


def _take_shared_lock(path: Path, deadline: float, timeout: float) -> bytes:
    """Create OpenClaw's lock file with its owner already in it: the owner line goes into a
    private temp file that is hard-linked into place (atomic create-with-content), so an
    ownerless lock file never exists, even after a kill or a full disk."""
    token = f"{os.getpid()}:{int(time.time() * 1000)}\n".encode()
    _clean_lock_temps(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(token)
        while True:
            try:
                _link_exclusive(tmp, path, token)
            except FileExistsError:
                pid, stale = shared_lock_owner(path)
                if stale:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(path)
                    continue
                if time.monotonic() >= deadline:
                    owner = f" (process {pid})" if pid else ""
                    raise LockBusy(
                        f"another memcore or OpenClaw run{owner} holds the lock {path} "
                        f"(waited {timeout:g}s); try again later"
                    ) from None
                time.sleep(0.04)
                continue
            return token
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _link_exclusive(tmp: Path, path: Path, token: bytes) -> None:
    """Hard-link ``tmp`` to ``path`` (FileExistsError when taken). Where the file system has
    no hard links, fall back to an exclusive create (the owner follows in the same call)."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(token)


def _clean_lock_temps(path: Path) -> None:
    """Remove owner temp files left by killed processes (``.<lock>.<pid>.<hex>.tmp``)."""
    prefix = f".{path.name}."
    try:
        names = [n for n in os.listdir(path.parent) if n.startswith(prefix) and n.endswith(".tmp")]
    except OSError:
        return
    for name in names:
        pid_text = name[len(prefix) :].split(".", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid():
            continue
        if not pid_alive(int(pid_text)):
            with contextlib.suppress(OSError):
                os.unlink(path.parent / name)


def _drop_shared_lock(path: Path, token: bytes) -> None:
    """Remove the lock file only if it is still ours."""
    try:
        if path.read_bytes() == token:
            path.unlink()
    except FileNotFoundError:
        pass


def lock_timeout_default() -> float:
    """Seconds to wait for the workspace lock: ``$MEMCORE_LOCK_TIMEOUT`` or 10."""
    try:
        value = float(os.environ.get("MEMCORE_LOCK_TIMEOUT", DEFAULT_LOCK_TIMEOUT))
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT
    return value if value >= 0 else DEFAULT_LOCK_TIMEOUT


def resolve_workspace(
    path: str | os.PathLike[str] | None = None, *, must_exist: bool = True
) -> Workspace:
    """Workspace from an explicit path, else ``MEMCORE_WORKSPACE``, else the current directory."""
    raw = path if path not in (None, "") else os.environ.get("MEMCORE_WORKSPACE") or os.getcwd()
    root = Path(raw).expanduser()
    if must_exist:
        if not root.exists():
            raise WorkspaceError(f"workspace {root} does not exist (use memcore init {root})")
        if not root.is_dir():
            raise WorkspaceError(f"workspace {root} is not a directory")
        from memcore.workspace.kinds import placed

        ws = placed(Workspace(root.absolute()))
        if not is_workspace(ws):
            raise WorkspaceError(
                f"not a memcore workspace: {ws.root} (create one with memcore init {ws.root})"
            )
        return ws
    from memcore.workspace.kinds import placed

    return placed(Workspace(root.absolute()))


def is_workspace(ws: Workspace) -> bool:
    """A folder is a workspace when it has MEMORY.md, memory/ or memcore.toml (so no command
    but ``init`` ever creates memory/.dreams/ in some other folder)."""
    return (
        ws.memory_md.exists()
        or ws.memory_dir.is_dir()
        or ws.config_path.exists()
        or ws.state is not None
    )


def is_daily_note_path(path: str) -> bool:
    """True for a daily note: ``…/memory/YYYY-MM-DD.md`` or a bare ``YYYY-MM-DD.md``, a split
    day ``YYYY-MM-DD-HHMM.md``, and a note in a sub-folder ``memory/<sub>/YYYY-MM-DD.md``
    (every layout of OpenClaw's workspaces); not under ``memory/dreaming/``,
    ``memory/imports/`` or a hidden folder."""
    return daily_note_reason(path) is None


def daily_note_reason(path: str) -> str | None:
    """Why ``path`` is not a daily note (a few words), or None when it is one."""
    norm = normalize_rel_path(path)
    parts = norm.split("/")
    if not DAILY_NAME_RE.match(parts[-1]):
        return "file name is not YYYY-MM-DD.md or YYYY-MM-DD-HHMM.md"
    if len(parts) == 1:
        return None
    if "memory" not in parts[:-1]:
        return "not under memory/"
    sub = parts[parts.index("memory") + 1 : -1]
    if any(d.startswith(".") for d in sub):
        return "in a hidden folder"
    if sub and sub[0] in NOT_DAILY_FOLDERS:
        return f"under memory/{sub[0]}/"
    return None


def normalize_rel_path(path: str) -> str:
    """Backslashes to slashes, a leading ``./`` stripped."""
    if "\\" not in path and not path.startswith(".") and path == path.strip():
        return path
    norm = path.strip().replace("\\", "/")
    while norm.startswith("./"):
        norm = norm[2:]
    return norm


def _create_temp(target: Path) -> tuple[int, str]:
    """A new private file ``.<name>.<random>.tmp`` beside ``target`` (what tempfile.mkstemp
    does, without importing tempfile on the recording path)."""
    while True:
        tmp = str(target.with_name(f".{target.name}.{os.urandom(8).hex()}.tmp"))
        try:
            return os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), tmp
        except FileExistsError:
            continue


def atomic_write_bytes(
    path: Path | str, data: bytes, *, before_replace: Callable[[str], None] | None = None
) -> None:
    """Write ``data`` to ``path`` atomically: temp file in the same folder, fsync, replace.

    A symlink is written through to its target; the target's mode is kept. ``before_replace``
    is called with the temp file's path once it is durable, just before the rename (a caller
    records an intent there: the temp file still existing means the rename never happened).
    """
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    fd, tmp = _create_temp(target)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        if before_replace is not None:
            before_replace(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)


def atomic_write_text(path: Path | str, text: str) -> None:
    """Atomic write of UTF-8 text (see atomic_write_bytes)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def _fsync_dir(directory: Path) -> None:
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


MAX_TEXT_BYTES = 64 * 1024 * 1024  # a markdown file larger than this is not read


def _open_regular(path: Path | str, max_bytes: int | None) -> int:
    """A descriptor of the regular file at ``path``, opened without blocking (a FIFO put
    there after a caller's own check cannot hang the open) and checked with ``fstat`` on the
    descriptor itself, so what is read is what was checked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except IsADirectoryError:
        raise WorkspaceError(f"{path} is a directory, expected a markdown file") from None
    except PermissionError:
        raise WorkspaceError(f"{path} is not readable (permission denied)") from None
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise WorkspaceError(f"{path} cannot be opened: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise WorkspaceError(f"{path} is a directory, expected a markdown file")
        if not stat.S_ISREG(st.st_mode):
            raise WorkspaceError(f"{path} is not a regular file (a FIFO, socket or device)")
        if max_bytes is not None and st.st_size > max_bytes:
            raise WorkspaceError(f"{path} is {st.st_size} bytes, over the {max_bytes} limit")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular_bytes(path: Path | str, max_bytes: int = MAX_TEXT_BYTES) -> bytes:
    """The bytes of a regular file, never blocking on a FIFO nor reading a device.

    Raises WorkspaceError for a directory, a FIFO, a device (a link to /dev/zero), a file over
    ``max_bytes`` or one that cannot be read; FileNotFoundError when it does not exist."""
    fd = _open_regular(path, max_bytes)
    try:
        chunks: list[bytes] = []
        total = 0
        # the whole file in one read when its size is known (no copy to join chunks)
        want = max(1 << 20, min(os.fstat(fd).st_size, max_bytes) + 1)
        while True:
            try:
                part = os.read(fd, want)
                want = 1 << 20
            except OSError as exc:
                raise WorkspaceError(f"{path} cannot be read: {exc.strerror or exc}") from None
            if not part:
                break
            total += len(part)
            if total > max_bytes:
                raise WorkspaceError(f"{path} grew past the {max_bytes}-byte limit while read")
            chunks.append(part)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_regular_head(path: Path | str, size: int) -> bytes:
    """At most the first ``size`` bytes of a regular file, with the checks of
    :func:`read_regular_bytes` (whatever the file's length)."""
    fd = _open_regular(path, None)
    try:
        chunks: list[bytes] = []
        total = 0
        while total < size:
            try:
                part = os.read(fd, min(1 << 20, size - total))
            except OSError as exc:
                raise WorkspaceError(f"{path} cannot be read: {exc.strerror or exc}") from None
            if not part:
                break
            total += len(part)
            chunks.append(part)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text_checked(path: Path) -> str:
    """Read a markdown file as UTF-8, refusing NUL bytes and invalid UTF-8 with a clear error
    (and FIFOs, devices and huge files, see read_regular_bytes)."""
    data = read_regular_bytes(path)
    if b"\x00" in data:
        raise WorkspaceError(f"{path} contains NUL bytes; expected UTF-8 markdown text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WorkspaceError(
            f"{path} is not valid UTF-8 (byte {exc.start}); expected UTF-8 markdown text"
        ) from None
