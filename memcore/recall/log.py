"""The recall log: searches are recorded by appending here, without the workspace lock.

``memory/.dreams/recall-log.jsonl`` holds one JSON line per search call (or per part of one,
when its hits do not fit a single small write). Each append is one ``write`` to a file opened
with ``O_APPEND``, so concurrent recorders never interleave and never wait for a run that
holds the workspace lock. The next holder of the lock folds the log into the recall store:

1. it renames the log to a numbered segment ``recall-log.<ns>-<pid>.seg`` (new appends start
   a fresh log), then waits on the segment's ``flock`` for appends already in flight;
2. it applies every segment's lines in order to the store, writes the new store to a temp
   file, writes an intent ``recall-fold.<id>.json`` naming the segments and that temp file,
   renames the temp file over the store, deletes the segments and then the intent.

A crash anywhere leaves either the temp file (the store was not replaced: fold again) or no
temp file (the store was replaced: only delete the segments), so a fold neither loses nor
double-counts a recall. Readers that may not write (previews) read the pending lines on top of
the store with :func:`pending_events`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from memcore.errors import StoreError
from memcore.recall.entries import ORIGINS, Hit
from memcore.workspace.core import Workspace, atomic_write_bytes

LOG_NAME = "recall-log.jsonl"
SEGMENT_SUFFIX = ".seg"
INTENT_PREFIX = "recall-fold."
#: One append stays within this many bytes (PIPE_BUF), so each is a single atomic write.
MAX_LINE_BYTES = 4000


@dataclass(frozen=True)
class Event:
    """One search call's hits (or part of them) as recorded in the log."""

    at: str
    query_hash: str
    origin: str
    hits: tuple[Hit, ...]


def log_path(ws: Workspace) -> Path:
    return ws.dreams_dir / LOG_NAME


def _hit_doc(h: Hit) -> dict[str, Any]:
    return {
        "path": h.path,
        "startLine": h.start_line,
        "endLine": h.end_line,
        "score": h.score,
        "snippet": h.snippet,
        "key": h.key,
    }


def encode(at: str, query_hash: str, origin: str, hits: list[Hit]) -> list[bytes]:
    """The log lines of one search call, each at most MAX_LINE_BYTES when it can be (one hit
    per line past that; a hit's snippet is already capped)."""
    lines: list[bytes] = []
    batch: list[dict[str, Any]] = []

    def line(docs: list[dict[str, Any]]) -> bytes:
        doc = {"at": at, "qh": query_hash, "origin": origin, "hits": docs}
        return b"\n" + orjson.dumps(doc) + b"\n"

    for h in hits:
        doc = _hit_doc(h)
        if batch and len(line([*batch, doc])) > MAX_LINE_BYTES:
            lines.append(line(batch))
            batch = []
        batch.append(doc)
    if batch:
        lines.append(line(batch))
    return lines


def append(ws: Workspace, at: str, query_hash: str, origin: str, hits: list[Hit]) -> None:
    """Append one search call's hits to the log (no workspace lock). Raises StoreError when
    the log cannot be written (read-only folder, full disk)."""
    path = log_path(ws)
    try:
        ws.ensure_dreams_dir()
        for data in encode(at, query_hash, origin, hits):
            _append_bytes(path, data)
    except OSError as exc:
        raise StoreError(f"cannot record recalls in {path}: {exc.strerror or exc}") from None


def append_events(ws: Workspace, events: Iterable[Event]) -> None:
    """Append many search calls' hits to the log in one write (a batch recorder's group
    commit: one open, one shared flock, one ``write`` for the whole batch). Every line still
    starts with a newline, so a write torn by a full disk loses only its last line's parse
    and never merges two lines. Raises StoreError like :func:`append`."""
    path = log_path(ws)
    data = b"".join(
        line for ev in events for line in encode(ev.at, ev.query_hash, ev.origin, list(ev.hits))
    )
    if not data:
        return
    try:
        ws.ensure_dreams_dir()
        _append_bytes(path, data)
    except OSError as exc:
        raise StoreError(f"cannot record recalls in {path}: {exc.strerror or exc}") from None


def _append_bytes(path: Path, data: bytes) -> None:
    """One O_APPEND write to the log file that ``path`` names at the moment of writing.

    A shared flock is held while writing; a folder renames the log, then takes the exclusive
    flock once, so every append either lands before that or in the next log file."""
    for _ in range(1000):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                continue  # renamed to a segment since we opened it: append to the new log
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            return
        finally:
            os.close(fd)
    raise OSError(f"the recall log {path} kept moving while appending")


# -- claiming and reading -------------------------------------------------------------------


def segments(ws: Workspace) -> list[Path]:
    """Claimed segments waiting to be folded, oldest first."""
    if not ws.dreams_dir.is_dir():
        return []
    return sorted(ws.dreams_dir.glob("recall-log.*" + SEGMENT_SUFFIX))


def claim(ws: Workspace) -> list[Path]:
    """Turn the live log into a segment (call with the workspace lock held) and return every
    segment to fold. Appends in flight finish before this returns."""
    path = log_path(ws)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        size = 0
    if size > 0:
        seg = ws.dreams_dir / f"recall-log.{time.time_ns():020d}-{os.getpid()}{SEGMENT_SUFFIX}"
        os.rename(path, seg)
        fd = os.open(seg, os.O_RDONLY | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # a barrier: in-flight appends are done
        finally:
            os.close(fd)
    return segments(ws)


def _parse_hit(doc: Any) -> Hit | None:
    if not isinstance(doc, dict):
        return None
    try:
        path, key, snippet = doc["path"], doc["key"], doc.get("snippet", "")
        start, end, score = doc["startLine"], doc["endLine"], doc.get("score", 0.0)
    except KeyError:
        return None
    if not (isinstance(path, str) and isinstance(key, str) and isinstance(snippet, str)):
        return None
    ints = (start, end)
    if any(isinstance(v, bool) or not isinstance(v, int) or not 1 <= v < 2**63 for v in ints):
        return None
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        return None
    return Hit(path, start, end, float(score), snippet, key)


def parse_lines(data: bytes) -> list[Event]:
    """Events of a log's bytes; torn or foreign lines are skipped."""
    events: list[Event] = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(doc, dict):
            continue
        at, qh, origin = doc.get("at"), doc.get("qh"), doc.get("origin")
        if not (isinstance(at, str) and isinstance(qh, str) and origin in ORIGINS):
            continue
        hits = [h for h in map(_parse_hit, doc.get("hits") or ()) if h is not None]
        if hits:
            events.append(Event(at, qh, str(origin), tuple(hits)))
    return events


def read_events(paths: Iterable[Path]) -> list[Event]:
    out: list[Event] = []
    for p in paths:
        try:
            out.extend(parse_lines(p.read_bytes()))
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StoreError(f"cannot read the recall log {p}: {exc.strerror or exc}") from None
    return out


def pending_events(ws: Workspace) -> list[Event]:
    """Every recorded search not yet folded into the store (segments, then the live log),
    read without the lock and without writing."""
    done = _done_segments(ws)
    paths = [p for p in segments(ws) if p.name not in done]
    return read_events([*paths, log_path(ws)])


# -- folding with an intent -----------------------------------------------------------------


def _intents(ws: Workspace) -> list[Path]:
    if not ws.dreams_dir.is_dir():
        return []
    return sorted(ws.dreams_dir.glob(INTENT_PREFIX + "*.json"))


def _read_intent(path: Path) -> dict[str, Any] | None:
    try:
        doc = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return doc if isinstance(doc, dict) else None


def _done_segments(ws: Workspace) -> set[str]:
    """Segments an intent says are already in the store (its temp file was renamed)."""
    done: set[str] = set()
    for p in _intents(ws):
        doc = _read_intent(p)
        if doc is None:
            continue
        tmp = doc.get("tmp")
        if isinstance(tmp, str) and not (ws.dreams_dir / tmp).exists():
            done.update(s for s in doc.get("segments") or () if isinstance(s, str))
    return done


def recover(ws: Workspace) -> None:
    """Finish or undo a fold a crash interrupted (call with the workspace lock held)."""
    for p in _intents(ws):
        doc = _read_intent(p) or {}
        tmp = doc.get("tmp")
        segs = [s for s in doc.get("segments") or () if isinstance(s, str) and "/" not in s]
        if isinstance(tmp, str) and "/" not in tmp and (ws.dreams_dir / tmp).exists():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(ws.dreams_dir / tmp)  # the store was never replaced: fold again
        else:
            for s in segs:  # the store holds them: only the clean-up was left
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(ws.dreams_dir / s)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(p)


@contextlib.contextmanager
def fold_intent(ws: Workspace, segs: list[Path]) -> Iterator[Any]:
    """Context for the store write of a fold: yields the ``before_replace`` hook for
    atomic_write_bytes, which records the intent; afterwards the segments and the intent go."""
    intent = ws.dreams_dir / f"{INTENT_PREFIX}{os.urandom(16).hex()}.json"

    def before_replace(tmp: str) -> None:
        doc = {"tmp": os.path.basename(tmp), "segments": [s.name for s in segs]}
        atomic_write_bytes(intent, orjson.dumps(doc) + b"\n")

    try:
        yield before_replace
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(intent)  # the temp file is gone too: the segments stay to fold later
        raise
    for s in segs:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(s)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(intent)
