"""``memcore import``: memories exported by another tool, as MEMORY.md entries with metadata.

The file is JSON (a list of objects, or an object whose ``memories``, ``results`` or ``items``
key holds that list: mem0's ``get_all`` shape) or JSONL (one object a line). Each object::

    text              required; "memory" (mem0) or "content" are read when "text" is absent
    type              decision | convention | preference | fact | session_state |
                      compact_summary | task_learning | unknown          (default unknown)
    scope             global | project | session                           (default global)
    importance        number 0-1                                           (default 0.5)
    confidence        number 0-1                                           (default 0.7)
    pinned            true | false                                         (default false)
    created_at        ISO 8601                                             (default now)
    last_accessed_at  ISO 8601 or null, not before created_at              (default null)
    access_count      integer >= 0                                         (default 0)

Other keys (ids, user ids, hashes, metadata) are ignored. Text goes through
:func:`memcore.redact.redact` and is folded to one line. A row whose text MEMORY.md already
holds, or an earlier row of the file, is skipped as a duplicate.

:func:`read_import` validates every row and never writes (an apply first calls
:func:`roll_back_interrupted`); :func:`apply_import` appends the entries under one
``## Imported (date)`` heading and saves their ledger rows, as one journaled run (``memcore
undo`` takes it back). Nothing is written while any row is invalid (unless the caller asks to
skip invalid rows), nor when MEMORY.md is or would be over ``[memory] budget_chars``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memcore.dream import tables
from memcore.errors import InputError
from memcore.journal import runs as journal
from memcore.journal import wal
from memcore.journal.runs import Change
from memcore.promotion.budget import budget_chars, over_budget_error
from memcore.recall import ledger
from memcore.recall.ledger import DEFAULT_CONFIDENCE, DEFAULT_IMPORTANCE, Meta
from memcore.redact import redact
from memcore.workspace.clock import iso_ms, parse_iso
from memcore.workspace.core import Workspace, read_text_checked
from memcore.workspace.entries import SCOPES, TYPES, content_hash, parse
from memcore.workspace.layouts.hermes import entry_text
from memcore.workspace.markdown import format_marker, text_entry_id

SECTION = "## Imported"
TITLE = "# Long-Term Memory"
MAX_TEXT = 2000
MAX_ROWS = 100_000
_LIST_KEYS = ("memories", "results", "items")
_TEXT_KEYS = ("text", "memory", "content")


@dataclass(frozen=True)
class RowError:
    """One bad row: its number (1-based: the list position, or the line of a JSONL file)."""

    row: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"row {self.row}: {self.field}: {self.message}"


@dataclass
class ImportRow:
    row: int
    id: str
    text: str
    meta: Meta
    redacted: bool = False

    def raw(self) -> str:
        attrs = {"id": self.id}
        if self.meta.type != "unknown":
            attrs["type"] = self.meta.type
        if self.meta.scope != "global":
            attrs["scope"] = self.meta.scope
        if self.meta.pinned:
            attrs["pinned"] = "true"
        attrs["created"] = self.meta.created_at
        return format_marker(attrs) + "\n- " + self.text + "\n"


@dataclass
class ImportPlan:
    """What an import would do: the valid rows, the bad ones, the duplicates skipped."""

    source: str
    rows: list[ImportRow] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)
    duplicates: list[int] = field(default_factory=list)
    total: int = 0
    memory_sha1: str = ""

    @property
    def invalid_rows(self) -> int:
        return len({e.row for e in self.errors})

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "rows": self.total,
            "valid": len(self.rows),
            "invalid": self.invalid_rows,
            "duplicates": self.duplicates,
            "redacted": sum(1 for r in self.rows if r.redacted),
            "errors": [{"row": e.row, "field": e.field, "message": e.message} for e in self.errors],
            "entries": [
                {"row": r.row, "id": r.id, "text": r.text, "meta": r.meta.to_json()}
                for r in self.rows
            ],
        }


def _records(path: Path) -> list[tuple[int, Any]]:
    """(row number, decoded object) of every row; InputError when the file is neither JSON
    nor JSONL."""
    try:
        text = read_text_checked(path)
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text; allowed: a JSON or JSONL file") from None
    stripped = text.lstrip("\ufeff").strip()
    if not stripped:
        raise InputError(f"{path}: the file is empty; allowed: a JSON list or JSONL objects")
    if stripped[0] == "[" or (stripped[0] == "{" and "\n" not in stripped):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
        if isinstance(data, dict):
            found = next((data[k] for k in _LIST_KEYS if isinstance(data.get(k), list)), None)
            data = found if found is not None else [data]
        if not isinstance(data, list):
            raise InputError(f"{path}: the JSON is not a list of memories")
        return list(enumerate(data, start=1))
    if stripped[0] == "{":
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict):
            found = next((data[k] for k in _LIST_KEYS if isinstance(data.get(k), list)), None)
            if found is not None:
                return list(enumerate(found, start=1))
    out: list[tuple[int, Any]] = []
    for n, line in enumerate(stripped.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line)))
        except json.JSONDecodeError as exc:
            out.append((n, _BadLine(exc.msg)))
    return out


@dataclass(frozen=True)
class _BadLine:
    message: str


def _number(v: Any, name: str, row: int, errors: list[RowError], default: float) -> float:
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        errors.append(RowError(row, name, f"{v!r} is not allowed; allowed: a number from 0 to 1"))
        return default
    if not 0.0 <= float(v) <= 1.0:
        errors.append(RowError(row, name, f"{v!r} is out of range; allowed: a number from 0 to 1"))
        return default
    return float(v)


def _time(v: Any, name: str, row: int, errors: list[RowError]) -> datetime | None:
    if v is None:
        return None
    dt = parse_iso(v) if isinstance(v, str) else None
    if dt is None:
        errors.append(
            RowError(row, name, f"{v!r} is not allowed; allowed: an ISO 8601 time or null")
        )
    return dt


def _choice(v: Any, name: str, row: int, errors: list[RowError], allowed: tuple[str, ...]) -> str:
    if v is None:
        return allowed[-1] if name == "type" else allowed[0]
    if isinstance(v, str) and v.strip().lower() in allowed:
        return v.strip().lower()
    errors.append(RowError(row, name, f"{v!r} is not allowed; allowed: {', '.join(allowed)}"))
    return "unknown" if name == "type" else "global"


def parse_row(row: int, obj: Any, now: datetime) -> tuple[ImportRow | None, list[RowError]]:
    """One record checked field by field: the entry, or every error it has."""
    errors: list[RowError] = []
    if isinstance(obj, _BadLine):
        return None, [RowError(row, "line", f"not valid JSON ({obj.message})")]
    if not isinstance(obj, dict):
        return None, [RowError(row, "row", 'not an object; allowed: {"text": ..., ...}')]
    key = next((k for k in _TEXT_KEYS if k in obj), "text")
    raw_text = obj.get(key)
    text = " ".join(raw_text.split()) if isinstance(raw_text, str) else ""
    if not isinstance(raw_text, str) or not text:
        errors.append(RowError(row, "text", "missing or empty; allowed: a non-empty string"))
    elif len(text) > MAX_TEXT:
        errors.append(RowError(row, "text", f"{len(text)} characters; allowed: at most {MAX_TEXT}"))
    type_ = _choice(obj.get("type"), "type", row, errors, TYPES)
    scope = _choice(obj.get("scope"), "scope", row, errors, SCOPES)
    importance = _number(obj.get("importance"), "importance", row, errors, DEFAULT_IMPORTANCE)
    confidence = _number(obj.get("confidence"), "confidence", row, errors, DEFAULT_CONFIDENCE)
    pinned = obj.get("pinned", False)
    if pinned is None:
        pinned = False
    if not isinstance(pinned, bool):
        errors.append(RowError(row, "pinned", f"{pinned!r} is not allowed; allowed: true, false"))
        pinned = False
    created = _time(obj.get("created_at"), "created_at", row, errors)
    accessed = _time(obj.get("last_accessed_at"), "last_accessed_at", row, errors)
    if created is not None and created > now:
        errors.append(
            RowError(
                row, "created_at", f"{obj['created_at']!r} is in the future; allowed: up to now"
            )
        )
    if created is not None and accessed is not None and accessed < created:
        errors.append(
            RowError(
                row,
                "last_accessed_at",
                f"{obj['last_accessed_at']!r} is before created_at; allowed: created_at or later",
            )
        )
    count = obj.get("access_count", 0)
    if count is None:
        count = 0
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        errors.append(
            RowError(row, "access_count", f"{count!r} is not allowed; allowed: an integer >= 0")
        )
        count = 0
    if errors:
        return None, errors
    clean = redact(text)
    eid = text_entry_id(clean)
    meta = Meta(
        id=eid,
        importance=importance,
        type=type_,
        scope=scope,
        pinned=pinned,
        confidence=confidence,
        created_at=iso_ms(created or now),
        last_accessed_at=iso_ms(accessed) if accessed is not None else None,
        access_count=count,
    )
    return ImportRow(row, eid, clean, meta, clean != text), []


def read_import(ws: Workspace, path: Path, *, now: datetime) -> ImportPlan:
    """Read and check ``path`` against ``ws``'s MEMORY.md; writes nothing."""
    if not path.is_file():
        raise InputError(f"{path}: no such file; allowed: a JSON or JSONL file of memories")
    records = _records(path)
    if len(records) > MAX_ROWS:
        raise InputError(f"{path}: {len(records)} rows; allowed: at most {MAX_ROWS} per import")
    return plan_records(ws, str(path), records, now=now)


def plan_records(
    ws: Workspace, source_label: str, records: list[tuple[int, Any]], *, now: datetime
) -> ImportPlan:
    """Check ``records`` (row number, object) against ``ws``'s MEMORY.md; writes nothing."""
    source = ledger.read_memory(ws)
    doc = parse(source)
    have = {e.id for e in doc.entries} | {text_entry_id(e.text) for e in doc.entries}
    if _is_hermes(ws):  # a Hermes MEMORY.md holds § entries, not markdown ones
        from memcore.workspace.layouts import hermes

        have |= {text_entry_id(t) for t in hermes.split_entries(source)}
    plan = ImportPlan(source_label, total=len(records), memory_sha1=content_hash(source))
    for row, obj in records:
        got, errors = parse_row(row, obj, now)
        plan.errors.extend(errors)
        if got is None:
            continue
        if got.id in have:
            plan.duplicates.append(row)
            continue
        have.add(got.id)
        plan.rows.append(got)
    return plan


def roll_back_interrupted(ws: Workspace, lock_timeout: float = 10.0) -> None:
    """Before ``import --apply`` reads its rows: roll back a run that was interrupted, so the
    rows are checked against what the run will find under the lock (a killed import's
    half-committed entries are not mistaken for duplicates)."""
    wal.recover_pending(ws, lock_timeout)


def _is_hermes(ws: Workspace) -> bool:
    from memcore.workspace.kinds import kind_of

    return kind_of(ws.root).name == "hermes"


def hermes_text(ws: Workspace, source: str, rows: list[ImportRow]) -> str:
    """A Hermes MEMORY.md with each row one more ``§`` entry (no marker, no heading: Hermes
    shows the file to its model as it is); InputError, nothing imported, past Hermes' limit."""
    from memcore.workspace.layouts import hermes

    after = source
    for r in rows:
        after = hermes.appended(after, hermes.entry_text(r.text))
    limit = hermes.limit_of(ws.memory_md)
    if limit is not None and len(after) > limit:
        raise InputError(
            f"{ws.memory_md}: importing {len(rows)} entries would make it {len(after)} "
            f"characters; allowed: at most {limit} (Hermes' limit for MEMORY.md); nothing was "
            "imported (import fewer rows)"
        )
    return after


def appended_text(source: str, rows: list[ImportRow], now: datetime) -> str:
    """MEMORY.md with the imported entries under one dated heading at its end."""
    eol = "\r\n" if "\r\n" in source else "\n"
    prefix = ""
    if not source.strip():
        prefix = TITLE + eol
    elif not source.endswith(("\n", "\r")):
        prefix = eol
    lines = ["", f"{SECTION} ({now.date().isoformat()})", ""]
    body = eol.join(lines) + eol + "".join(r.raw().replace("\n", eol) for r in rows)
    return source + prefix + body


def apply_import(
    ws: Workspace,
    plan: ImportPlan,
    *,
    now: datetime,
    skip_invalid: bool = False,
    lock_timeout: float = 10.0,
    trigger: str = "command",
) -> dict[str, Any]:
    """Write the plan's entries and ledger rows as one journaled run. Refuses (InputError,
    nothing written) while a row is invalid unless ``skip_invalid``, and when MEMORY.md
    changed since the plan was read, and when MEMORY.md is, or would become, larger than
    ``[memory] budget_chars`` (the whole import is refused: no row is worth more than another)."""
    if plan.errors and not skip_invalid:
        raise InputError(
            f"{plan.invalid_rows} invalid row(s) in {plan.source}; nothing was imported "
            "(fix them, or pass --skip-invalid)"
        )
    out = {**plan.to_json(), "imported": 0, "runId": None, "applied": False}
    if not plan.rows:
        return out
    budget = budget_chars(ws)  # a bad value fails here, before anything is written
    with ws.lock(lock_timeout), tables.connect(ws) as conn:
        source = ledger.read_memory(ws)
        if content_hash(source) != plan.memory_sha1:
            raise InputError("MEMORY.md changed while the import was prepared; run it again")
        hermes = _is_hermes(ws)
        after = (
            hermes_text(ws, source, plan.rows) if hermes else appended_text(source, plan.rows, now)
        )
        if len(source) > budget:
            raise over_budget_error(len(source), budget, "nothing was imported")
        if len(after) > budget:
            raise InputError(
                f"importing {len(plan.rows)} entries would make MEMORY.md {len(after)} "
                f"characters, over [memory] budget_chars = {budget} (it is {len(source)} now); "
                "nothing was imported. Allowed: a larger budget_chars, fewer rows, or fewer "
                "entries (memcore dream merges and forgets)"
            )
        run_id = journal.new_run_id(now)
        name = Path(plan.source).name
        changes = [
            Change(
                "import",
                "add",
                r.id,
                f"imported from {name} row {r.row}",
                after_raw=entry_text(r.text) if hermes else r.raw(),
                after_meta=r.meta.to_json(),
            )
            for r in plan.rows
        ]
        metas = [r.meta for r in plan.rows]

        def finish(c: Any) -> None:
            ledger.save(c, metas)

        wal.commit_run(
            ws,
            conn,
            wal.RunSpec(
                run_id,
                "import",
                "apply",
                now,
                trigger,
                counters={
                    "imported": len(plan.rows),
                    "skippedInvalid": plan.invalid_rows,
                    **({"format": "hermes"} if hermes else {}),
                },
                changes=changes,
            ),
            {ws.memory_md: after.encode("utf-8")},
            finish=finish,
        )
    out.update(imported=len(plan.rows), runId=run_id, applied=True)
    return out
