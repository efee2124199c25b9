"""Decision records: explicit user decisions kept on their own, beside the short memories.

A decision is a sentence the user said that settles something ("we decided …", "let's always
…", "never …", "from now on …"), found by the patterns below in the user messages a dream
reads, or named by the model (the answer's optional ``"decisions": [{"quote", "source"}]``)
when its quote is found word for word in a user message the call was sent. Each record keeps
the verbatim quote (redacted like every stored text) and the stable references of the
messages it came from (``memcore.sessions.refs``), so it can be checked against the
transcript.

Decisions follow the rules of the memories they sit beside: those of a session that is
independent, deleted or unreadable are not listed for the project (``recall decisions``
says how many are withheld and why; ``--session`` still reads them), and ``sessions forget
--purge`` removes a text from them too.

Table ``sess_decisions`` (workspace database, created by ``store.ensure_schema``): ``id``,
``session_id``, ``quote``, ``quote_hash`` (unique per session), ``messages`` (JSON
``[[ref, text hash], …]``), ``found_by`` (``pattern``, ``model`` or ``pattern+model``),
``ts`` (the message's time), ``created_at``, ``run_id``. Reference: ``decision:<id>``.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memcore.redact import redact
from memcore.sessions.transcripts import Message

MAX_QUOTE = 600  # characters: a longer "sentence" is not a decision someone said
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)", re.M)
_DECISION = re.compile(
    r"\b(?:we|i|the team)(?:'ve| have)?\s+(?:just\s+|now\s+|finally\s+)?(?:decided|agreed)\b|"
    r"\blet'?s\s+(?:always|never)\b|"
    r"^\s*(?:please\s+)?(?:never|always)\s+\w+|"
    r"\bwe\s+(?:should\s+|must\s+)?(?:never|always)\s+\w+|"
    r"\bfrom now on\b|\bgoing forward\b|\bdecision\s*:",
    re.I,
)


@dataclass(frozen=True)
class Found:
    quote: str  # verbatim, redacted
    message: Message
    by: str  # pattern | model


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def find(messages: Iterable[Message]) -> list[Found]:
    """Sentences of user messages that state a decision (not questions), from the redacted
    text."""
    out = []
    for m in messages:
        if m.role != "user":
            continue
        for s in sentences(redact(m.text)):  # redacted whole: no secret is cut in two
            if len(s) <= MAX_QUOTE and not s.endswith("?") and _DECISION.search(s):
                out.append(Found(s, m, "pattern"))
    return out


def from_model(
    claimed: list[tuple[str, str]], carried: dict[str, tuple[Message, ...]]
) -> tuple[list[Found], list[str]]:
    """The model's decisions ``(quote, source id)`` whose quote a user message of that source
    holds word for word (whitespace aside); the reasons for the others."""
    found: list[Found] = []
    dropped: list[str] = []
    for quote, sid in claimed:
        want = " ".join(redact(quote).split())
        hit = next(
            (
                m
                for m in carried.get(sid, ())
                if m.role == "user" and want and want in " ".join(redact(m.text).split())
            ),
            None,
        )
        if hit is None or len(want) > MAX_QUOTE:
            # the quote itself stays out of the report: a fragment may hide from the redactor
            dropped.append(f"decision not quoted word for word from a user message: source {sid}")
            continue
        found.append(Found(want, hit, "model"))
    return found, dropped


def record(
    conn: sqlite3.Connection,
    session: str,
    found: list[Found],
    *,
    now_iso: str,
    run_id: str | None,
) -> list[int]:
    """Insert new decisions (call inside the publishing transaction); the new ids. The same
    quote found again (by the patterns and by the model) is one record."""
    new: list[int] = []
    for f in found:
        qh = hashlib.sha1(" ".join(f.quote.split()).lower().encode()).hexdigest()[:16]
        row = conn.execute(
            "SELECT id, found_by FROM sess_decisions WHERE session_id=? AND quote_hash=?",
            (session, qh),
        ).fetchone()
        if row is not None:
            if f.by not in row[1].split("+"):
                by = "+".join(sorted({*row[1].split("+"), f.by}, key=("pattern", "model").index))
                conn.execute("UPDATE sess_decisions SET found_by=? WHERE id=?", (by, row[0]))
            continue
        cur = conn.execute(
            "INSERT INTO sess_decisions (session_id, quote, quote_hash, messages, found_by, ts,"
            " created_at, run_id) VALUES (?,?,?,?,?,?,?,?)",
            (
                session,
                f.quote,
                qh,
                json.dumps([[f.message.ref, f.message.digest]]),
                f.by,
                f.message.ts,
                now_iso,
                run_id,
            ),
        )
        new.append(int(cur.lastrowid or 0))
    return new


def as_dict(row: sqlite3.Row) -> dict[str, Any]:
    try:
        msgs = [{"ref": r, "digest": d} for r, d in json.loads(row["messages"])]
    except (ValueError, TypeError):
        msgs = []
    return {
        "ref": f"decision:{row['id']}",
        "id": row["id"],
        "session": row["session_id"],
        "quote": row["quote"],
        "messages": msgs,
        "found_by": row["found_by"],
        "ts": row["ts"],
        "created_at": row["created_at"],
    }


def purge(conn: sqlite3.Connection, text: str, replacement: str) -> list[str]:
    """Replace ``text`` in every quote (call inside a transaction); the refs changed."""
    rows = conn.execute(
        "SELECT id FROM sess_decisions WHERE instr(quote, ?) > 0 ORDER BY id", (text,)
    ).fetchall()
    conn.execute(
        "UPDATE sess_decisions SET quote = replace(quote, ?, ?) WHERE instr(quote, ?) > 0",
        (text, replacement, text),
    )
    return [f"decision:{r[0]}" for r in rows]
