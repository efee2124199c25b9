"""Sources of a call from transcript messages: chunks of at most 5,000 UTF-8 bytes, each
with the messages it carries and a stable reference to them (``memcore.sessions.refs``)."""

from __future__ import annotations

from dataclasses import dataclass

from memcore.redact import redact
from memcore.sessions import refs
from memcore.sessions.budget import split_utf8
from memcore.sessions.prompts import RequestSource
from memcore.sessions.transcripts import Message

CHUNK_BYTES = 5_000


@dataclass(frozen=True)
class Unit:
    """One source of a call and the messages it carries."""

    source: RequestSource
    start: int  # message index range [start, end) in this parse
    end: int
    messages: tuple[Message, ...]


def source_units(session: str, messages: list[Message], kind: str) -> list[Unit]:
    """Group messages into sources of at most 5,000 UTF-8 bytes; a longer message is split on
    character boundaries into several sources.

    Messages are redacted whole before they are split, so no secret is cut in two halves
    that the redactor would no longer recognise. A source's reference names its first and
    last message by their stable references (``memcore.sessions.refs``)."""
    out: list[Unit] = []
    buf: list[str] = []
    held: list[Message] = []
    size = 0

    def flush() -> None:
        nonlocal buf, size, held
        if buf:
            ref = refs.range_ref(session, held[0], held[-1])
            src = RequestSource(f"s{len(out) + 1}", kind, ref, "\n".join(buf))
            out.append(Unit(src, held[0].index, held[-1].index + 1, tuple(held)))
        buf, held, size = [], [], 0

    for m in messages:
        line = f"[{m.index} {m.role}] {redact(m.text)}"
        n = len(line.encode("utf-8")) + 1
        if n > CHUNK_BYTES:
            flush()
            for piece in split_utf8(line, CHUNK_BYTES):
                src = RequestSource(f"s{len(out) + 1}", kind, refs.message_ref(session, m), piece)
                out.append(Unit(src, m.index, m.index + 1, (m,)))
            continue
        if size + n > CHUNK_BYTES:
            flush()
        buf.append(line)
        held.append(m)
        size += n
    flush()
    return out
