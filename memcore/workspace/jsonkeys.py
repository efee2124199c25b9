"""camelCase keys at the JSON boundary.

Library dicts are built by several modules, some with snake_case keys (sessions, the ledger's
metadata); every face that prints or serves JSON (``--json``, the HTTP API, the MCP tools)
passes its document through :func:`camel_keys`, so a consumer sees one style everywhere. Only
keys that look like snake_case identifiers are rewritten: paths, ids, dates and words with
other characters are data and stay as they are.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar, cast

T = TypeVar("T")
_SNAKE_RE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def camel(key: str) -> str:
    """``last_run`` → ``lastRun``; anything that is not a snake_case identifier is unchanged."""
    if not _SNAKE_RE.fullmatch(key):
        return key
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def camel_keys(data: T) -> T:
    """A copy of ``data`` (dicts, lists, tuples, scalars) with every dict key in camelCase;
    tuples become lists, as in JSON. Anything else is returned as it is."""
    return cast(T, _camel_keys(data))


def _camel_keys(data: Any) -> Any:
    if isinstance(data, dict):
        return {camel(k) if isinstance(k, str) else k: _camel_keys(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_camel_keys(v) for v in data]
    return data
