"""Workspace kinds: which agent's memory layout a folder holds, detected from what is on disk.

``memcore`` (MEMORY.md and memory/ daily notes, memcore's own), ``openclaw`` (the same files as
an OpenClaw agent workspace writes them, with ``openclaw.json`` beside or above it),
``claude-code`` (an auto-memory folder ``~/.claude/projects/<project>/memory/``: a MEMORY.md
index and topic files with YAML front matter; or a project with CLAUDE.md), ``codex``
(``~/.codex/memories/``: MEMORY.md and memory_summary.md) and ``hermes``
(``~/.hermes/memories/``: MEMORY.md and USER.md, entries separated by ``§``).

``[workspace] kind`` in memcore.toml overrides the detection. For the kinds whose folder another
tool owns (claude-code, codex, hermes) memcore keeps its own files (recall store, journal,
index, lock, its memcore.toml) in a folder of its own, :func:`state_dir`, never in theirs.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from memcore.errors import ConfigError
from memcore.workspace.core import Workspace

KINDS = ("memcore", "openclaw", "claude-code", "codex", "hermes")
#: Kinds whose folder belongs to another tool: memcore's files live in :func:`state_dir`.
OWN_STATE_KINDS = frozenset({"claude-code", "codex", "hermes"})
_SLUG_RE = re.compile(r"[^A-Za-z0-9]+")


@dataclass(frozen=True)
class Kind:
    """A workspace's kind and why memcore thinks so (``source``)."""

    name: str
    source: str  # "memcore.toml [workspace] kind" or "detected: <what was on disk>"

    @property
    def own_state(self) -> bool:
        return self.name in OWN_STATE_KINDS


def user_dir() -> Path:
    """The user's memcore folder: ``$MEMCORE_USER_DIR`` or the platform data dir."""
    env = os.environ.get("MEMCORE_USER_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("memcore"))


def state_dir(root: Path) -> Path:
    """memcore's own folder for the workspace at ``root`` (one per resolved path)."""
    full = str(root.absolute())
    slug = _SLUG_RE.sub("-", root.name).strip("-")[:40] or "root"
    digest = hashlib.sha1(full.encode("utf-8")).hexdigest()[:12]
    return user_dir() / "workspaces" / f"{slug}-{digest}"


def configured_kind(root: Path) -> Kind | None:
    """``[workspace] kind`` from the root's memcore.toml, else from the one in memcore's own
    folder for it; ConfigError (file, key, allowed values) for a value that is not a kind."""
    for path in (root / "memcore.toml", state_dir(root) / "memcore.toml"):
        if not path.is_file():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
            continue  # load_config reports a broken file with its own message
        table = data.get("workspace")
        if not isinstance(table, dict) or "kind" not in table:
            continue
        value = table["kind"]
        if value not in KINDS:
            raise ConfigError(
                f"{path} [workspace] kind = {value!r} is not a workspace kind; "
                f"allowed: {', '.join(KINDS)}"
            )
        return Kind(str(value), f"{path.name} [workspace] kind")
    return None


def openclaw_config_path(root: Path) -> Path | None:
    """``openclaw.json`` beside the workspace or in the folder above it (``~/.openclaw/``)."""
    for p in (root / "openclaw.json", root.parent / "openclaw.json"):
        if p.is_file():
            return p
    return None


def _has_front_matter_topics(root: Path) -> bool:
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return False
    for name in names[:200]:
        if not name.endswith(".md") or name in ("MEMORY.md", "CLAUDE.md"):
            continue
        try:
            with open(root / name, encoding="utf-8", errors="replace") as fh:
                head = fh.read(400)
        except OSError:
            continue
        if head.startswith("---") and re.search(r"^(type|name|description):", head, re.M):
            return True
    return False


def detect(root: Path) -> Kind:
    """The kind of the folder ``root`` from what is on disk (see the module docstring)."""
    parts = root.absolute().parts
    if (root / "memory_summary.md").is_file() or parts[-2:] == (".codex", "memories"):
        return Kind("codex", "detected: memory_summary.md")
    if parts[-2:] == (".hermes", "memories") or (
        (root / "USER.md").is_file() and (root / "MEMORY.md").is_file() and _hermes_like(root)
    ):
        return Kind("hermes", "detected: MEMORY.md and USER.md with § entries")
    if len(parts) >= 4 and parts[-1] == "memory" and parts[-4:-2] == (".claude", "projects"):
        return Kind("claude-code", "detected: a ~/.claude/projects/<project>/memory folder")
    no_notes = not (root / "memory").is_dir()
    if no_notes and (root / "MEMORY.md").is_file() and _has_front_matter_topics(root):
        return Kind("claude-code", "detected: MEMORY.md index and topic files")
    if no_notes and (root / "CLAUDE.md").is_file() and not (root / "MEMORY.md").exists():
        return Kind("claude-code", "detected: CLAUDE.md")
    oc = openclaw_config_path(root)
    if oc is not None:
        return Kind("openclaw", f"detected: {oc.name}")
    if (root / "memory").is_dir() and any(
        (root / n).exists() for n in ("AGENTS.md", "SOUL.md", "DREAMS.md", "memory/dreaming")
    ):
        return Kind("openclaw", "detected: an OpenClaw agent workspace (AGENTS.md/SOUL.md)")
    why = "detected: MEMORY.md and memory/" if (root / "memory").is_dir() else "default"
    return Kind("memcore", why)


def _hermes_like(root: Path) -> bool:
    try:
        with open(root / "MEMORY.md", encoding="utf-8", errors="replace") as fh:
            return "§" in fh.read(64 * 1024)
    except OSError:
        return False


def kind_of(root: Path) -> Kind:
    """The configured kind, else the detected one.

    Asked on every index scan, so the answer is kept per folder while nothing it depends on
    changed: the stat of the folder, of the one above it (``openclaw.json``), of ``memory/``,
    of both memcore.toml files and of MEMORY.md (a Hermes folder's ``§`` entries). A file
    created, removed or renamed in those folders changes the folder's mtime. Never kept when
    one of them changed within the last two seconds (a second change inside one mtime tick
    would look the same), nor for a folder without ``memory/`` (the detection then reads the
    topic files' front matter)."""
    key = _kind_key(root)
    name = str(root)
    if key is not None:
        with _kinds_lock:
            hit = _kinds.get(name)
        if hit is not None and hit[0] == key:
            return hit[1]
    kind = configured_kind(root) or detect(root)
    if key is not None:
        with _kinds_lock:
            _kinds[name] = (key, kind)
            while len(_kinds) > _KINDS_KEPT:
                del _kinds[next(iter(_kinds))]
    return kind


_KINDS_KEPT = 256
_KIND_RACY_NS = 2_000_000_000
_kinds: dict[str, tuple[tuple[object, ...], Kind]] = {}
_kinds_lock = threading.Lock()


def _kind_key(root: Path) -> tuple[object, ...] | None:
    """What :func:`kind_of`'s answer for ``root`` depends on, or None when it is not to be
    kept (see there)."""
    user = os.environ.get("MEMCORE_USER_DIR")
    where = (str(root), user, None if root.is_absolute() else os.getcwd())
    own = _state_tomls.get(where)
    if own is None:
        if len(_state_tomls) > _KINDS_KEPT:
            _state_tomls.clear()
        own = _state_tomls[where] = str(state_dir(root) / "memcore.toml")
    now = time.time_ns()
    parts: list[object] = [where]
    paths = (root, root.parent, root / "memory", root / "memcore.toml", own, root / "MEMORY.md")
    for path in paths:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            parts.append(None)
            continue
        except OSError:
            return None
        if now - st.st_mtime_ns < _KIND_RACY_NS or now - st.st_ctime_ns < _KIND_RACY_NS:
            return None
        parts.append((st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    if parts[3] is None or not stat.S_ISDIR(parts[3][0]):  # type: ignore[index]
        return None
    return tuple(parts)


_state_tomls: dict[tuple[str, str | None, str | None], str] = {}


def placed(ws: Workspace) -> Workspace:
    """``ws`` with memcore's own folder moved out when its kind's folder belongs to another
    tool (claude-code, codex, hermes); unchanged otherwise."""
    if ws.state is not None or not ws.root.is_dir():
        return ws
    if kind_of(ws.root).own_state:
        return Workspace(ws.root, state=state_dir(ws.root))
    return ws
