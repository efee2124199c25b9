"""Stable message references, and what the review has read.

A message is referenced by what stays true of it when its transcript is repaired or rewritten
in place:

- ``session:<id>#<uuid>`` where the format gives each record a ``uuid`` (Claude Code);
  a tool message of that record is ``<uuid>.tool``;
- ``session:<id>#@<byte offset>:<line hash>`` otherwise: the file is the session's (its path
  under the sessions folder, so a rewrite through a new inode is the same file), the offset
  says where the line was and the hash (12 hex of SHA-1 of the record as canonical JSON, so
  spacing and key order do not count) what it said.
  When lines before it are repaired, added or removed, the same line is found again by its
  hash, nearest to the old offset;
- ``session:<id>#<first>..<last>`` is a range (a source the model read), inclusive.

``session:<id>#N-M`` (message positions, as written before stable references) is still
read, by position in the transcript as it is now.

Review progress remembers each message read, per level (``summary`` for user and assistant
text, ``raw`` for tool traffic), by its key (the uuid, or the line hash) and the hash of its
text (``sess_seen``). A message whose text changed under the same uuid, or a broken line that
was repaired, is therefore unread again and the next dream reviews it; a line that only moved
stays read. The index markers of ``sess_progress`` are derived from this set whenever a
transcript is parsed (``reconcile``).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from memcore.errors import InputError
from memcore.sessions.transcripts import Message, Transcript

LEVELS = ("summary", "raw")
STATE_KEY = "message_refs"  # sess_state: "stable" once old index references were migrated
_OFFSET = re.compile(r"^@(\d+):([0-9a-f]{6,40})(\.tool)?$")
_POSITIONAL = re.compile(r"^(\d+)-(\d+)$")


def message_ref(session: str, m: Message) -> str:
    return f"session:{session}#{m.ref}"


def range_ref(session: str, first: Message, last: Message) -> str:
    """The reference of messages ``first``..``last`` (one message: its own reference)."""
    if first.ref == last.ref:
        return message_ref(session, first)
    return f"session:{session}#{first.ref}..{last.ref}"


@dataclass(frozen=True)
class RangeRef:
    session: str
    first: str  # a message reference, or a position for ``positional``
    last: str
    positional: bool = False


def parse_range(ref: str) -> RangeRef | None:
    """``session:ID#A..B``, ``session:ID#A`` or ``session:ID#N-M``; None for other refs."""
    ref = ref.strip()
    if not ref.startswith("session:") or "#" not in ref:
        return None
    sid, _, tail = ref[len("session:") :].rpartition("#")
    if not sid or not tail:
        return None
    m = _POSITIONAL.match(tail)
    if m:
        return RangeRef(sid, m.group(1), m.group(2), positional=True)
    first, sep, last = tail.partition("..")
    if not first or (sep and not last):
        return None
    return RangeRef(sid, first, last or first)


@dataclass(frozen=True)
class Resolved:
    message: Message | None
    status: str  # same | moved | changed | gone

    def as_dict(self) -> dict[str, object]:
        m = self.message
        return {
            "status": self.status,
            "index": m.index if m else None,
            "ref": m.ref if m else None,
            "line": m.line if m else None,
        }


def resolve(messages: list[Message], ref: str, digest: str | None = None) -> Resolved:
    """Find the message ``ref`` (the part after ``#``) names in ``messages`` as they are now.

    ``same``: found where it was and, when ``digest`` is given, saying the same; ``moved``: the
    same line at another offset; ``changed``: its uuid (or its offset) holds other text now;
    ``gone``: nothing left of it."""
    m = _OFFSET.match(ref)
    if m is None:
        for msg in messages:
            if msg.ref == ref:
                ok = digest is None or msg.digest == digest
                return Resolved(msg, "same" if ok else "changed")
        return Resolved(None, "gone")
    offset, line_hash, part = int(m.group(1)), m.group(2), m.group(3) or ""
    best: Message | None = None
    at_offset: Message | None = None
    for msg in messages:
        o = _OFFSET.match(msg.ref)
        if o is None or (o.group(3) or "") != part:
            continue
        if int(o.group(1)) == offset:
            at_offset = msg
        if o.group(2) == line_hash and (
            best is None or abs(int(o.group(1)) - offset) < abs(_offset(best) - offset)
        ):
            best = msg
    if best is not None:
        return Resolved(best, "same" if _offset(best) == offset else "moved")
    if at_offset is not None:
        return Resolved(at_offset, "changed")
    return Resolved(None, "gone")


def _offset(msg: Message) -> int:
    m = _OFFSET.match(msg.ref)
    return int(m.group(1)) if m else -1


def resolve_range(tr: Transcript, rr: RangeRef) -> tuple[int, int]:
    """Indexes [first, last] of a range reference in the transcript as it is now; InputError
    naming the end that is gone."""
    if rr.positional:
        return int(rr.first), int(rr.last)
    out = []
    for end in (rr.first, rr.last):
        found = resolve(tr.messages, end)
        if found.message is None:
            raise InputError(
                f"recall: message {end!r} of session {rr.session} is no longer in its transcript"
                " (changed or removed); its short memory still cites it"
            )
        out.append(found.message.index)
    return out[0], out[1]


# -- review progress --------------------------------------------------------------------


def level_of(m: Message) -> str:
    return "summary" if m.is_conversation else "raw"


def seen(conn: sqlite3.Connection, session: str, level: str) -> dict[str, str]:
    """Key -> text hash of the messages of ``session`` read at ``level``."""
    rows = conn.execute(
        "SELECT key, digest FROM sess_seen WHERE session_id=? AND level=?", (session, level)
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def unread(messages: Iterable[Message], read: dict[str, str]) -> list[Message]:
    return [m for m in messages if read.get(m.key) != m.digest]


def mark_read(conn: sqlite3.Connection, session: str, messages: Iterable[Message]) -> None:
    """Remember these messages as read (call inside the publishing transaction)."""
    conn.executemany(
        "INSERT INTO sess_seen (session_id, level, key, digest) VALUES (?,?,?,?)"
        " ON CONFLICT (session_id, level, key) DO UPDATE SET digest=excluded.digest",
        [(session, level_of(m), m.key, m.digest) for m in messages],
    )


def markers(conn: sqlite3.Connection, session: str, tr: Transcript) -> tuple[int, int]:
    """(summary_through, raw_through) from what was read: the first unread message of each
    level (user and assistant text among the completed turns; tool traffic below that)."""
    through = tr.complete_through()
    read_s, read_r = seen(conn, session, "summary"), seen(conn, session, "raw")
    summary = next(
        (
            m.index
            for m in tr.messages[:through]
            if m.is_conversation and read_s.get(m.key) != m.digest
        ),
        through,
    )
    raw = next(
        (
            m.index
            for m in tr.messages[:summary]
            if not m.is_conversation and read_r.get(m.key) != m.digest
        ),
        summary,
    )
    return summary, raw


def changed_count(conn: sqlite3.Connection, session: str, messages: list[Message]) -> int:
    """How many of ``messages`` were read before with other text (re-read because changed)."""
    n = 0
    for level in LEVELS:
        read = seen(conn, session, level)
        n += sum(1 for m in messages if level_of(m) == level and m.key in read)
    return n


def source_messages(messages: Iterable[Message]) -> str:
    """The ``messages`` column of a source: JSON ``[[ref, text hash], …]``."""
    return json.dumps([[m.ref, m.digest] for m in messages])


# -- migrating index references ---------------------------------------------------------


def migrate(conn: sqlite3.Connection, load: dict[str, Transcript | None]) -> dict[str, int]:
    """Turn a database written with index references into stable ones, without losing a
    memory: the messages below each index marker are recorded as read, and each session
    source gets the stable references of the messages at its positions, in the transcript as
    it is now (its ``ref`` becomes their range; ``from_idx``/``to_idx`` keep the positions).
    ``load`` maps session id to its parsed transcript (None: unreadable now, its progress is
    kept as it was). Call inside a transaction; idempotent."""
    out = {"sessions": 0, "sources": 0}
    rows = conn.execute(
        "SELECT session_id, summary_through, raw_through FROM sess_progress"
    ).fetchall()
    for r in rows:
        sid = r[0]
        tr = load.get(sid)
        if tr is None:
            continue
        has = conn.execute("SELECT 1 FROM sess_seen WHERE session_id=? LIMIT 1", (sid,)).fetchone()
        if has is None:
            s_end, r_end = int(r[1] or 0), int(r[2] or 0)
            mark_read(
                conn,
                sid,
                [m for m in tr.messages[:s_end] if m.is_conversation]
                + [m for m in tr.messages[:r_end] if not m.is_conversation],
            )
            out["sessions"] += 1
        srcs = conn.execute(
            "SELECT s.memory_id, s.seq, s.kind, s.from_idx, s.to_idx FROM sess_memory_sources s"
            " JOIN sess_memories m ON m.id = s.memory_id"
            " WHERE m.level='session' AND m.owner=? AND s.kind IN ('messages', 'raw')"
            " AND s.messages IS NULL AND s.from_idx IS NOT NULL",
            (sid,),
        ).fetchall()
        for s in srcs:
            want_conv = s[2] == "messages"
            msgs = [
                m
                for m in tr.messages[int(s[3]) : int(s[4] or s[3] + 1)]
                if m.is_conversation == want_conv
            ]
            conn.execute(  # the source is cited by its messages' references from now on
                "UPDATE sess_memory_sources SET messages=?, ref=coalesce(?, ref)"
                " WHERE memory_id=? AND seq=?",
                (
                    source_messages(msgs),
                    range_ref(sid, msgs[0], msgs[-1]) if msgs else None,
                    s[0],
                    s[1],
                ),
            )
            out["sources"] += 1
    return out
