"""The catalog of session files: scanning the sessions folder into ``sess_files`` and finding
candidates (sessions with a completed turn memcore has not reviewed yet).

Unchanged files (same size and mtime) are not parsed again, so a run with nothing new stays
cheap. A file that cannot be read is listed as unreadable; it never blocks the others.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memcore.errors import InputError, UnsupportedFormat
from memcore.sessions import refs
from memcore.sessions.binding import split_files, unsorted_warning
from memcore.sessions.settings import SessionsSettings
from memcore.sessions.store import get_state, progress, set_state, transaction
from memcore.sessions.transcripts import Transcript, read_transcript
from memcore.workspace.clock import iso_ms, parse_iso
from memcore.workspace.core import Workspace

PATTERNS = ("*.jsonl",)
_UPSERT = """
INSERT INTO sess_files (id, path, format, independent, generated, size, mtime_ns, messages,
    complete_through, completed_turns, last_turn_ts, last_activity, status, error, title, broken)
VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
ON CONFLICT (id) DO UPDATE SET
    path = excluded.path,
    format = coalesce(excluded.format, sess_files.format),
    independent = excluded.independent,
    generated = excluded.generated,
    size = excluded.size,
    mtime_ns = excluded.mtime_ns,
    messages = CASE WHEN excluded.status = 'ok' THEN excluded.messages ELSE sess_files.messages END,
    complete_through = CASE WHEN excluded.status = 'ok'
        THEN excluded.complete_through ELSE sess_files.complete_through END,
    completed_turns = CASE WHEN excluded.status = 'ok'
        THEN excluded.completed_turns ELSE sess_files.completed_turns END,
    last_turn_ts = coalesce(excluded.last_turn_ts, sess_files.last_turn_ts),
    last_activity = coalesce(excluded.last_activity, sess_files.last_activity),
    status = excluded.status,
    error = excluded.error,
    title = excluded.title,
    broken = excluded.broken
"""


@dataclass(frozen=True)
class SessionInfo:
    id: str
    path: Path
    format: str | None
    independent: bool
    generated: bool
    status: str  # ok | unreadable | unsupported | missing
    error: str | None
    size: int
    mtime_ns: int
    messages: int
    complete_through: int
    completed_turns: int
    last_turn_ts: str | None
    last_activity: str | None
    title: str | None = None
    broken: tuple[int, ...] = ()  # file line numbers that are not JSON (skipped)

    @property
    def shared(self) -> bool:
        return not self.independent


def session_files(directory: Path) -> dict[str, Path]:
    """Session id (relative path without ``.jsonl``) to file."""
    if not directory.is_dir():
        return {}
    out: dict[str, Path] = {}
    for pattern in PATTERNS:
        for p in directory.rglob(pattern):
            rel = p.relative_to(directory)
            if any(part.startswith(".") for part in rel.parts) or not p.is_file():
                continue
            out[rel.with_suffix("").as_posix()] = p
    return dict(sorted(out.items()))


def match_session(ids: Iterable[str], given: str) -> str | None:
    """The session id ``given`` names: the id itself, else the one id that it starts, or whose
    last part (the uuid of ``-home-me-app/<uuid>``) it starts; None for no match. Two or more
    matches are an InputError naming them: a short name never picks one by chance."""
    ids = list(ids)
    if given in ids:
        return given
    if not given:
        return None
    hits = [i for i in ids if i.startswith(given) or i.rsplit("/", 1)[-1].startswith(given)]
    if len(hits) > 1:
        shown = ", ".join(hits[:5]) + (", …" if len(hits) > 5 else "")
        raise InputError(
            f"session {given!r} names {len(hits)} sessions ({shown}); allowed: a longer start"
            " of one id (see `memcore recall sessions`)"
        )
    return hits[0] if hits else None


def scan(
    ws: Workspace,
    conn: sqlite3.Connection,
    settings: SessionsSettings,
    cache: dict[str, Transcript] | None = None,
    unsorted: list[dict[str, str]] | None = None,
) -> list[SessionInfo]:
    """Bring ``sess_files`` up to date with the folder; parse only files that changed.
    Parsed transcripts are put in ``cache`` for the run to reuse. In a whole projects root,
    the transcripts with no ``cwd`` (bound to no project) are added to ``unsorted`` as
    ``{session, file, warning}``."""
    folder = settings.sessions_dir(ws)
    files, lost = split_files(ws, folder, session_files(folder))  # a projects root: by cwd
    if unsorted is not None:
        unsorted.extend(
            {"session": sid, "file": str(p), "warning": unsorted_warning(p)}
            for sid, p in lost.items()
        )
    known = {r["id"]: r for r in conn.execute("SELECT * FROM sess_files").fetchall()}
    cache = {} if cache is None else cache
    _migrate_refs(conn, files, cache)
    updates: list[tuple[object, ...]] = []
    parsed: dict[str, Transcript] = {}
    for sid, path in files.items():
        try:
            st = path.stat()
        except OSError:
            continue
        row = known.get(sid)
        independent_cfg = sid in settings.independent or path.name in settings.independent
        if (
            row is not None
            and row["size"] == st.st_size
            and row["mtime_ns"] == st.st_mtime_ns
            and row["status"] == "ok"
            and bool(row["independent"]) == (independent_cfg or bool(row["independent"]))
        ):
            continue
        try:
            tr = read_transcript(path)
        except InputError as exc:
            unsupported = isinstance(exc, UnsupportedFormat)
            updates.append(
                (
                    sid,
                    str(path),
                    exc.guess if isinstance(exc, UnsupportedFormat) else None,
                    int(independent_cfg),
                    0,
                    st.st_size,
                    st.st_mtime_ns,
                    0,
                    0,
                    0,
                    None,
                    None,
                    "unsupported" if unsupported else "unreadable",
                    str(exc),
                    None,
                    None,
                )
            )
            continue
        cache[sid] = tr
        parsed[sid] = tr
        through = tr.complete_through()
        activity = tr.last_ts() or iso_ms(datetime.fromtimestamp(st.st_mtime, UTC))
        updates.append(
            (
                sid,
                str(path),
                tr.format,
                int(independent_cfg or tr.independent),
                int(tr.generated),
                st.st_size,
                st.st_mtime_ns,
                len(tr.messages),
                through,
                tr.completed_turns(),
                tr.last_ts(through),
                activity,
                "ok",
                None,
                str(tr.meta.get("title") or "") or None,
                json.dumps(tr.broken) if tr.broken else None,
            )
        )
    missing = [sid for sid in known if sid not in files and known[sid]["status"] != "missing"]
    if updates or missing:
        with transaction(conn):
            conn.executemany(_UPSERT, updates)
            conn.executemany(
                "UPDATE sess_files SET status='missing' WHERE id=?", [(s,) for s in missing]
            )
            for sid, tr in parsed.items():  # a repaired or changed message is unread again
                summary, raw = refs.markers(conn, sid, tr)
                prog = progress(conn, sid)
                if (prog["summary_through"], prog["raw_through"]) != (summary, raw):
                    conn.execute(
                        "INSERT INTO sess_progress (session_id, summary_through, raw_through)"
                        " VALUES (?,?,?) ON CONFLICT (session_id) DO UPDATE SET"
                        " summary_through=excluded.summary_through,"
                        " raw_through=excluded.raw_through",
                        (sid, summary, raw),
                    )
    return all_sessions(conn)


def _migrate_refs(
    conn: sqlite3.Connection, files: dict[str, Path], cache: dict[str, Transcript]
) -> None:
    """Once per database: progress and sources written with message positions get stable
    references (``refs.migrate``), read from the transcripts as they are now."""
    if get_state(conn, refs.STATE_KEY) == "stable":
        return
    load: dict[str, Transcript | None] = {}
    for (sid,) in conn.execute("SELECT session_id FROM sess_progress").fetchall():
        path = files.get(sid)
        try:
            load[sid] = cache.get(sid) or (read_transcript(path) if path else None)
        except InputError:
            load[sid] = None
        if load[sid] is not None:
            cache[sid] = load[sid]  # type: ignore[assignment]
    with transaction(conn):
        if get_state(conn, refs.STATE_KEY) != "stable":  # another process may have done it
            refs.migrate(conn, load)
            set_state(conn, refs.STATE_KEY, "stable")


def all_sessions(conn: sqlite3.Connection) -> list[SessionInfo]:
    rows = conn.execute("SELECT * FROM sess_files ORDER BY id").fetchall()
    return [
        SessionInfo(
            r["id"],
            Path(r["path"]),
            r["format"],
            bool(r["independent"]),
            bool(r["generated"]),
            r["status"],
            r["error"],
            r["size"] or 0,
            r["mtime_ns"] or 0,
            r["messages"] or 0,
            r["complete_through"] or 0,
            r["completed_turns"] or 0,
            r["last_turn_ts"],
            r["last_activity"],
            r["title"],
            tuple(json.loads(r["broken"])) if r["broken"] else (),
        )
        for r in rows
    ]


def candidates(conn: sqlite3.Connection, sessions: list[SessionInfo]) -> list[SessionInfo]:
    """Readable, not memcore-made sessions with unreviewed completed turns, newest first."""
    out = [
        s
        for s in sessions
        if s.status == "ok"
        and not s.generated
        and s.complete_through > progress(conn, s.id)["summary_through"]
    ]
    out.sort(key=lambda s: (s.last_turn_ts or "", s.id), reverse=True)
    return out


def raw_backlog(
    conn: sqlite3.Connection, sessions: list[SessionInfo], settings: SessionsSettings, now: datetime
) -> list[SessionInfo]:
    """Sessions idle for ``raw_idle_days`` whose raw transcript below the summaries is unread."""
    out = []
    for s in sessions:
        if s.status != "ok" or s.generated:
            continue
        prog = progress(conn, s.id)
        if prog["raw_through"] >= prog["summary_through"]:
            continue
        last = parse_iso(s.last_activity)
        if last is None or (now - last).total_seconds() < settings.raw_idle_days * 86400:
            continue
        out.append(s)
    out.sort(key=lambda s: (s.last_activity or "", s.id), reverse=True)
    return out


def load(info: SessionInfo, cache: dict[str, Transcript]) -> Transcript:
    tr = cache.get(info.id)
    if tr is None:
        tr = read_transcript(info.path)
        cache[info.id] = tr
    return tr
