"""The recall store file's layout, block by block, and the content hash of each block.

memcore and OpenClaw both write the store as 2-space JSON: ``{"version", "updatedAt",
"entries"}`` with one block per entry at four spaces (``    "key": {`` ... ``    }``). In that
layout no JSON string can hold a raw newline, so ``,\\n    "`` occurs only between two blocks:
splitting the file there gives every entry's bytes without parsing it. The mirror keeps each
entry's hash (its block's length and CRC-32), so a file another tool rewrote is diffed by
hashing blocks, and only the blocks that differ are parsed (:func:`split`). A file in any other
layout is parsed whole; its entries are hashed as the block memcore would write for them
(:func:`hashes_of`), so the two ways agree whenever the bytes do.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from memcore.recall.entries import js_numbers

HEAD = b'{\n  "version": 1,\n  "updatedAt": "'
ENTRIES = b'\n  "entries": {\n'
TAIL = b"\n  }\n}\n"
BLOCK_END = b"\n    }"
#: A block's first line: four spaces, the key as JSON (no raw newline can be inside), ``: {``.
BLOCK_START = re.compile(rb'\n    ("[^\n]*"): \{\n')
#: The same line for any value: the key as one JSON string token, then ``: ``.
_KEY_LINE = re.compile(rb'\n    ("[^"\\\n]*(?:\\.[^"\\\n]*)*"): ')
_SEP = b',\n    "'  # between two blocks, and nowhere else in this layout
_LEAD = len(b'\n    "')  # what a block's hashed bytes leave out: its newline, indent and quote


def block_bytes(key: str, entry: Any) -> bytes:
    """One entry's block as memcore writes it (leading newline and indent, no comma; numbers
    in JavaScript's form)."""
    return _block(key, js_numbers(entry))


def _block(key: str, value: Any) -> bytes:
    body = orjson.dumps(value, option=orjson.OPT_INDENT_2).replace(b"\n", b"\n    ")
    return b"\n    " + orjson.dumps(key) + b": " + body


def _hash(part: bytes | memoryview) -> int:
    return (len(part) << 32) | zlib.crc32(part)


def entry_hash(key: str, entry: Any, *, as_written: bool = False) -> int:
    """The content hash of ``entry``'s block (see :func:`split`): of the block memcore writes
    for it when ``as_written`` (memcore's in-memory entry), else of the value as parsed."""
    data = block_bytes(key, entry) if as_written else _block(key, entry)
    return _hash(memoryview(data)[_LEAD:])


@dataclass
class Blocks:
    """The entries of a store file in this layout, in file order: the keys, each block's
    bytes (from just after the key's opening quote to its closing brace) and their hashes."""

    keys: list[str]
    parts: list[bytes]
    hashes: list[int]
    names: list[bytes]  # each key as the file spells it between its quotes

    def value(self, i: int) -> Any:
        """Parse block ``i``'s entry (raises orjson.JSONDecodeError when the block is not its
        key, ``: `` and one JSON value)."""
        part, name = self.parts[i], self.names[i]
        if not part.startswith(name + b'": '):
            raise orjson.JSONDecodeError("block does not start with its key", "", 0)
        return orjson.loads(part[len(name) + 3 :])


def split(data: bytes) -> Blocks | None:
    """The blocks of a store file in the 2-space layout, or None when the file has another
    layout, no entries or a key twice (parse it whole then). Checks enough that the file is
    valid JSON with exactly these keys once every block whose hash is not already known to be
    a valid block has parsed (:meth:`Blocks.value`)."""
    tail = TAIL if data.endswith(TAIL) else TAIL[:-1] if data.endswith(TAIL[:-1]) else None
    if tail is None or not data.startswith(HEAD):
        return None
    quote = data.find(b'"', len(HEAD))
    if quote == -1 or data[quote + 1 : quote + 2 + len(ENTRIES)] != b"," + ENTRIES:
        return None
    try:
        if not isinstance(orjson.loads(data[len(HEAD) - 1 : quote + 1]), str):
            return None
    except orjson.JSONDecodeError:
        return None
    first = quote + 2 + len(ENTRIES)  # the first block's indent
    if data[first : first + _LEAD - 1] != b'    "':
        return None
    parts = data.split(_SEP)
    parts[0] = parts[0][first + _LEAD - 1 :]
    parts[-1] = parts[-1][: len(parts[-1]) - len(tail)]
    found = _plain_keys(parts)
    if found is None:
        found = _escaped_keys(data, first, len(parts))
    if found is None:
        return None
    keys, names = found
    if len(set(keys)) != len(keys):
        return None
    crc32 = zlib.crc32
    hashes = [(len(p) << 32) | crc32(p) for p in parts]
    return Blocks(keys, parts, hashes, names)


def _plain_keys(parts: list[bytes]) -> tuple[list[str], list[bytes]] | None:
    """The keys of blocks whose keys have no escape (every key a plain one; else None): each
    key is its block's bytes up to the first ``": ``, which is its closing quote when no
    quote or backslash comes before it. One ``find`` a block, no pass of a pattern."""
    names = [p[: p.find(b'": ')] for p in parts]
    inner = b'","'.join(names)
    if b"\\" in inner:
        return None
    try:
        keys = orjson.loads(b'["' + inner + b'"]')
    except orjson.JSONDecodeError:
        return None
    # A name with a quote in it (a block without ``": `` leaves its last byte out, and holds
    # a quote) makes more strings than names, or invalid JSON.
    return (keys, names) if len(keys) == len(names) else None


def _escaped_keys(data: bytes, first: int, n: int) -> tuple[list[str], list[bytes]] | None:
    """The keys of every block's first line, read with the JSON string pattern (a key with an
    escape: a quote, a backslash, a ``\\u`` sequence); None unless there are ``n``."""
    groups = _KEY_LINE.findall(data, first - 1)
    if len(groups) != n:
        return None
    try:
        keys = orjson.loads(b"[" + b",".join(groups) + b"]")
    except orjson.JSONDecodeError:
        return None
    # Each group starts a JSON string, so it adds at least one element: as many elements as
    # groups means every group is exactly one string.
    if len(keys) != len(groups):
        return None
    return keys, [g[1:-1] for g in groups]


def hashes_of(entries: Mapping[str, Any], *, as_written: bool = False) -> dict[str, int]:
    """The hash of every entry's block, from one dump of them all in the file's layout.
    ``as_written``: the entries are memcore's in-memory ones (numbers as the file holds them)."""
    doc = {
        "version": 1,
        "updatedAt": "",
        "entries": {k: js_numbers(v) for k, v in entries.items()} if as_written else entries,
    }
    try:
        data = orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    except TypeError:  # not JSON (a raw entry of another kind): hashed one by one
        data = b""
    found = split(data) if entries else None
    if found is None or len(found.keys) != len(entries):
        return {k: entry_hash(k, v, as_written=as_written) for k, v in entries.items()}
    return dict(zip(found.keys, found.hashes, strict=True))
