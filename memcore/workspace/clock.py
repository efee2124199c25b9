"""ISO-8601 timestamps in the recall store's form (UTC, milliseconds, ``Z``), and memcore's clock.

The clock is :func:`utcnow`. ``MEMCORE_NOW`` (ISO 8601: ``2026-04-05``, ``2026-04-05T10:00:00Z``
or with an offset) fixes it for every command of a process, so runs, evaluations and backfills
can be replayed on a chosen date; a value that is not a time is an :class:`InputError` naming
``MEMCORE_NOW``. This module is the only place that reads the variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime

from memcore.errors import InputError

NOW_ENV = "MEMCORE_NOW"


def fixed_now(environ: Mapping[str, str] | None = None) -> datetime | None:
    """The time ``MEMCORE_NOW`` sets (aware, UTC), None when it is unset or empty."""
    env = os.environ if environ is None else environ
    value = env.get(NOW_ENV, "").strip()
    if not value:
        return None
    dt = parse_iso(value)
    if dt is None:
        raise InputError(
            f"{NOW_ENV}={value!r} is not an ISO 8601 time; allowed: a date or date and time "
            "such as 2026-04-05 or 2026-04-05T10:00:00Z (or unset it)"
        )
    return dt.astimezone(UTC)


def utcnow() -> datetime:
    """The current time, aware, in UTC (``MEMCORE_NOW`` when set). Callers pass it down;
    nothing deep reads the clock."""
    return fixed_now() or datetime.now(UTC)


def iso_ms(dt: datetime) -> str:
    """``2026-04-05T10:00:00.000Z``."""
    dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def parse_iso(value: object) -> datetime | None:
    """Parse an ISO timestamp (``Z`` or offset); None when it is not one."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt
