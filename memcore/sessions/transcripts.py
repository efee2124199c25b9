"""Reading session transcripts: plain JSON Lines and Claude Code project transcripts.

The format is chosen by sniffing the first records. Plain lines are ``{"role", "content",
"ts"}``; Claude Code lines carry ``type`` (user / assistant / summary / system …) and
``message.content`` (a string or a list of content blocks). Either file may start with a
``---`` front-matter block (``independent: true``, ``generator: memcore``, ``title: …``).

Messages are split into turns: a real user message (not a tool result) opens a turn; a turn is
complete when an assistant has answered in text and the turn has ended (a later user message
follows, or the assistant stopped for a reason other than a tool call).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memcore.errors import InputError, UnsupportedFormat, WorkspaceError
from memcore.sessions.attachments import Attachment, attachment_of, attachments_of
from memcore.workspace.core import read_regular_bytes

SNIFF_LINES = 20
#: A transcript is read whole; one larger than this is refused (listed as unreadable)
MAX_TRANSCRIPT_BYTES = 1 << 30


@dataclass(frozen=True)
class Message:
    """One message of a transcript. ``index`` is its position in this parse (it shifts when
    lines are repaired or added before it); ``ref`` is its stable reference (see
    ``memcore.sessions.refs``): the record's ``uuid`` where the format has one, else
    ``@<byte offset>:<hash of the line>``; ``key`` is what the review progress remembers it
    by (the uuid, or the line hash, so a shifted line stays reviewed)."""

    index: int
    role: str  # user | assistant | tool | system
    text: str
    ts: str | None = None
    end_turn: bool | None = None  # Claude Code stop_reason: True end_turn, False tool_use
    ref: str = ""
    key: str = ""
    line: int = 0  # file line number (1-based) of the record
    attachments: tuple[Attachment, ...] = ()

    @property
    def is_conversation(self) -> bool:
        """User and assistant text: what the summary level reads."""
        return self.role in ("user", "assistant")

    @property
    def digest(self) -> str:
        """Hash of what the message says: a changed message (same uuid) hashes differently."""
        return hashlib.sha1(f"{self.role}\x1f{self.text}".encode()).hexdigest()[:12]


@dataclass
class Transcript:
    format: str  # plain | claude-code
    messages: list[Message]
    meta: dict[str, Any] = field(default_factory=dict)
    summaries: list[str] = field(default_factory=list)  # Claude Code compaction summaries
    broken: list[int] = field(default_factory=list)  # file line numbers that are not JSON

    @property
    def independent(self) -> bool:
        return _truthy(self.meta.get("independent"))

    @property
    def generated(self) -> bool:
        """Produced by memcore itself: never a candidate."""
        gen = str(self.meta.get("generator", "")).lower()
        return gen.startswith("memcore") or _truthy(self.meta.get("memcore_generated"))

    def complete_through(self) -> int:
        """Index just past the last message of the last completed turn (0 when none)."""
        end = 0
        turn_start: int | None = None
        answered = False
        last_assistant: Message | None = None
        for msg in self.messages:
            if msg.role == "user":
                if turn_start is not None and answered:
                    end = msg.index
                turn_start, answered, last_assistant = msg.index, False, None
            elif msg.role == "assistant" and turn_start is not None:
                answered = True
                last_assistant = msg
        if turn_start is not None and answered and self.messages:
            tail = self.messages[-1]
            if tail.role == "assistant" and last_assistant is tail and tail.end_turn is not False:
                end = tail.index + 1
        return end

    def completed_turns(self) -> int:
        through = self.complete_through()
        return sum(1 for m in self.messages[:through] if m.role == "user")

    def last_ts(self, upto: int | None = None) -> str | None:
        msgs = self.messages if upto is None else self.messages[:upto]
        for msg in reversed(msgs):
            if msg.ts:
                return msg.ts
        return None


def _truthy(value: Any) -> bool:
    return value is True or (
        isinstance(value, str) and value.strip().lower() in ("true", "yes", "1")
    )


def range_digest(messages: list[Message]) -> str:
    """Hash of a message range: before publishing, a run checks its sources still hash the same."""
    h = hashlib.sha1()
    for m in messages:
        h.update(f"{m.index}\x1f{m.role}\x1f{m.text}\x1e".encode())
    return h.hexdigest()[:16]


# -- reading ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Pos:
    """Where a record sits in its file: line number, byte offset, hash (``record_hash``)."""

    line: int
    offset: int
    hash: str


def read_transcript(path: Path) -> Transcript:
    """Parse a transcript file. Raises InputError when it cannot be read at all, or when
    what is at ``path`` now is no regular file (a FIFO put there after the scan is opened
    without blocking and refused, never waited on)."""
    try:
        data = read_regular_bytes(path, MAX_TRANSCRIPT_BYTES)
    except WorkspaceError as exc:
        raise InputError(str(exc)) from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if b"\x00" in data:
        raise InputError(f"{path}: contains NUL bytes; not a JSON Lines transcript")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not valid UTF-8 (byte {exc.start})") from None
    meta, body = _split_front_matter(text)
    head = text[: len(text) - len(body)]
    first_line = head.count("\n") + 1  # file line of the body's first
    records: list[dict[str, Any]] = []
    positions: list[_Pos] = []
    broken: list[int] = []
    offset = len(head.encode("utf-8"))
    raw_lines = data[offset:].split(b"\n")  # bytes, so offsets are exact and U+2028 stays
    for n, raw in enumerate(raw_lines):
        at = offset
        offset += len(raw) + 1
        line = raw.strip()
        if not line:
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            # a half-written last line is normal for a live transcript
            if n == len(raw_lines) - 1 and not data.endswith(b"\n"):
                continue
            broken.append(first_line + n)
            continue
        if isinstance(rec, dict):
            records.append(rec)
            positions.append(_Pos(first_line + n, at, record_hash(rec)))
        else:
            broken.append(first_line + n)
    bad = len(broken)
    if bad and bad >= len(records):  # mostly garbage: refuse rather than guess
        shown = ", ".join(map(str, broken[:10])) + (", …" if bad > 10 else "")
        raise InputError(
            f"{path}: line{'s' if bad > 1 else ''} {shown} of {bad + len(records)} are not"
            " JSON objects; allowed: one JSON object a line (JSON Lines)"
        )
    guess = unsupported_guess(records)
    if guess is not None:
        raise UnsupportedFormat(
            f"{path}: unsupported transcript format (looks like {guess})", guess
        )
    fmt = sniff(records)
    tr = _claude_code(records, positions) if fmt == "claude-code" else _plain(records, positions)
    tr.messages = _identify(tr.messages)
    tr.broken = broken
    if fmt == "plain" and records and not tr.messages and not _meta_only(records):
        raise UnsupportedFormat(
            f"{path}: unsupported transcript format (no record reads as a message)", "unknown"
        )
    for rec in records[:SNIFF_LINES]:
        if rec.get("type") in ("memcore", "session_meta") and isinstance(rec.get("meta"), dict):
            meta = {**rec["meta"], **meta}
    tr.meta = meta
    return tr


def record_hash(rec: dict[str, Any]) -> str:
    """12 hex of SHA-1 of the record as canonical JSON: a line written again with other
    spacing or key order hashes the same; one that says something else does not."""
    canon = json.dumps(rec, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha1(canon.encode()).hexdigest()[:12]


def _message(
    index: int,
    role: str,
    text: str,
    ts: Any,
    rec: dict[str, Any],
    pos: _Pos,
    end_turn: bool | None = None,
    attachments: tuple[Attachment, ...] = (),
) -> Message:
    """A message with its provisional reference (``_identify`` makes keys unique)."""
    uid = rec.get("uuid")
    part = ".tool" if role == "tool" else ""
    if isinstance(uid, str) and uid.strip() and "#" not in uid and ".." not in uid:
        ref = key = uid.strip() + part
    else:
        ref, key = f"@{pos.offset}:{pos.hash}{part}", f"h{pos.hash}{part}"
    return Message(
        index,
        role,
        text,
        ts if isinstance(ts, str) else None,
        end_turn,
        ref=ref,
        key=key,
        line=pos.line,
        attachments=attachments,
    )


def _identify(messages: list[Message]) -> list[Message]:
    """Make every key unique: a repeated uuid or an identical line gets ``~2``, ``~3`` … in
    file order (a uuid reference names the first; an offset one the nearest line)."""
    seen: dict[str, int] = {}
    out = []
    for m in messages:
        n = seen.get(m.key, 0) + 1
        seen[m.key] = n
        if n > 1:
            suffix = f"~{n}"
            ref = m.ref + suffix if not m.ref.startswith("@") else m.ref
            m = replace(m, key=m.key + suffix, ref=ref)
        out.append(m)
    return out


_CODEX_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")


def unsupported_guess(records: list[dict[str, Any]]) -> str | None:
    """A name for a known format memcore does not read, from the early records: a Codex CLI
    rollout log (``type`` + ``payload``), or OpenAI chat messages with tool calls (``content:
    null`` beside ``tool_calls``, ``tool_call_id``)."""
    for rec in records[:SNIFF_LINES]:
        if rec.get("type") in _CODEX_TYPES and isinstance(rec.get("payload"), dict):
            return "a Codex CLI log"
        if "role" in rec and (
            "tool_calls" in rec or "tool_call_id" in rec or rec.get("content", "") is None
        ):
            return "OpenAI chat messages with tool calls"
    return None


def _meta_only(records: list[dict[str, Any]]) -> bool:
    return all(r.get("type") in ("memcore", "session_meta", "summary") for r in records)


def sniff(records: list[dict[str, Any]]) -> str:
    """``claude-code`` when early records look like Claude Code's, else ``plain``."""
    for rec in records[:SNIFF_LINES]:
        if "role" in rec and "content" in rec:
            return "plain"
        if rec.get("type") in ("user", "assistant") and isinstance(rec.get("message"), dict):
            return "claude-code"
    return "plain"


def _split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 4)
    if end < 0:
        return {}, text
    meta: dict[str, Any] = {}
    for line in text[4:end].splitlines():
        if ":" in line and not line.lstrip().startswith("#"):
            key, _, value = line.partition(":")
            meta[key.strip()] = value.strip().strip("\"'")
    return meta, text[end + 5 :]


def _plain(records: list[dict[str, Any]], positions: list[_Pos]) -> Transcript:
    messages: list[Message] = []
    for rec, pos in zip(records, positions, strict=True):
        role = rec.get("role")
        if role not in ("user", "assistant", "tool", "system"):
            continue
        content = rec.get("content")
        text = _content_text(content)
        files = attachments_of(content)
        if files:
            text = "\n".join([*([text] if text else []), *(a.label() for a in files)])
        if text is None:
            continue
        ts = rec.get("ts") or rec.get("timestamp")
        messages.append(_message(len(messages), role, text, ts, rec, pos, attachments=files))
    return Transcript("plain", messages)


_TEXT_BLOCKS = (None, "text", "input_text", "output_text")


def _content_text(content: Any) -> str | None:
    """The text of a message's content: a string, or its text blocks (never text carried by
    an image or file block, which may be inferred from it)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b["text"]
            for b in content
            if isinstance(b, dict)
            and b.get("type") in _TEXT_BLOCKS
            and isinstance(b.get("text"), str)
        ]
        return "\n".join(parts) if parts else None
    return None


def _claude_code(records: list[dict[str, Any]], positions: list[_Pos]) -> Transcript:
    messages: list[Message] = []
    summaries: list[str] = []

    def add(
        role: str,
        text: str,
        ts: Any,
        end_turn: bool | None = None,
        files: tuple[Attachment, ...] = (),
    ) -> None:
        if files:
            text = "\n".join([*([text] if text.strip() else []), *(a.label() for a in files)])
        if text.strip():
            messages.append(_message(len(messages), role, text, ts, rec, pos, end_turn, files))

    for rec, pos in zip(records, positions, strict=True):  # noqa: B007 (add() reads them)
        kind = rec.get("type")
        if kind == "summary" and isinstance(rec.get("summary"), str):
            summaries.append(rec["summary"])
            continue
        if kind not in ("user", "assistant") or rec.get("isSidechain") is True:
            continue
        msg = rec.get("message")
        if not isinstance(msg, dict):
            continue
        ts = rec.get("timestamp")
        content = msg.get("content")
        if kind == "user":
            if rec.get("isMeta") is True:
                continue
            if isinstance(content, str):
                add("user", content, ts)
                continue
            if not isinstance(content, list):
                continue
            texts, tools, files, tool_files = _blocks(content)
            if texts or files:
                add("user", "\n".join(texts), ts, files=files)
            if tools:
                add("tool", "\n".join(tools), ts, files=tool_files)
            continue
        stop = msg.get("stop_reason")
        end_turn = None if stop is None else stop != "tool_use"
        if isinstance(content, str):
            add("assistant", content, ts, end_turn)
            continue
        if not isinstance(content, list):
            continue
        texts, tools, files, tool_files = _blocks(content)
        if tools:
            add("tool", "\n".join(tools), ts, files=tool_files)
        if texts or files:
            add("assistant", "\n".join(texts), ts, end_turn, files)
    return Transcript("claude-code", messages, summaries=summaries)


def tool_input_text(value: Any, indent: str = "") -> str:
    """Tool arguments as readable text: ``key: value`` lines with strings as they are (not
    JSON-escaped, so a secret or a multi-line command reads as it was typed and the redactor
    sees its real lines), nested objects and lists indented below their key."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and value:
        lines = []
        for key, item in value.items():
            if isinstance(item, dict | list) and item:
                lines.append(f"{indent}{key}:\n{tool_input_text(item, indent + '  ')}")
            else:
                lines.append(f"{indent}{key}: {tool_input_text(item, indent + '  ')}")
        return "\n".join(lines)
    if isinstance(value, list) and value:
        return "\n".join(
            f"{indent}- {tool_input_text(item, indent + '  ').lstrip()}" for item in value
        )
    return json.dumps(value, ensure_ascii=False)


def _blocks(
    content: list[Any],
) -> tuple[list[str], list[str], tuple[Attachment, ...], tuple[Attachment, ...]]:
    """Text blocks (conversation), tool traffic (raw) and the attachments of each, from a
    Claude Code content list.

    Tool arguments and results are kept whole, however long: the run splits them into
    chunks and ``recall`` pages them, nothing is cut. Images and documents, also inside a
    tool result, become references (``attachment_of``)."""
    texts: list[str] = []
    tools: list[str] = []
    files: list[Attachment] = []
    tool_files: list[Attachment] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "tool_use":
            args = tool_input_text(block.get("input", {}))
            tools.append(f"[tool call {block.get('name', '?')}] {args}")
        elif kind == "tool_result":
            inner = block.get("content")
            body = _content_text(inner)
            found = attachments_of(inner)
            tool_files += found
            tools.append(f"[tool result] {body or ''}")
        else:
            found_one = attachment_of(block)
            if found_one is not None:
                files.append(found_one)
    return texts, tools, tuple(files), tuple(tool_files)
