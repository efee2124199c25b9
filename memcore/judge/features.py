"""What the offline judge compares, derived once per entry instead of once per pair.

An entry of a 20,000-entry memory takes part in a few dozen candidate pairs; the pair
comparison (:func:`memcore.judge.offline.compare`) used to rebuild the same sets and strings
from both analyses for every pair. :class:`Features` holds them, built lazily and once per
:class:`memcore.judge.analysis.Analysis` (``analysis.features``):

* ``squashed``: the text lower-cased with only letters, digits and ``./:@#$%°`` kept (a
  value written with other punctuation is still found in it);
* ``value_keys``: the (kind, norm) of every value;
* ``token_set`` / ``content_set``: the tokens and content tokens as sets, and
  ``content_order``: the content tokens in the order the comparison always visited them;
* ``token_prefixes`` / ``content_prefixes``: the first five letters of the plain (non-value)
  tokens of at least five letters: two words "close" in the judge's sense (one word in two
  forms: equal, or the same first five letters) meet there;
* ``qualifier_kinds``: the qualifiers grouped by kind;
* ``content_keys``: ``content_order`` with each token's prefix (None when it has none), and
  ``value_tokens``: the token of each value (``<kind:norm>``), as the comparison spells them.

Nothing here decides anything; every test is the same test the comparison made before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memcore.judge.analysis import Analysis

_KEEP = frozenset("./:@#$%°")
PREFIX = 5  # letters two forms of one word share (``rotati`` / ``rotate``)


# ``\w`` is exactly ``str.isalnum()`` plus the underscore, for every code point
_DROP_RE = re.compile(r"[^\w./:@#$%°]+|_+")


def squash(s: str) -> str:
    """Lower-cased letters and digits of ``s`` plus ``./:@#$%°`` (nothing else)."""
    return _DROP_RE.sub("", s.lower())


@lru_cache(maxsize=65536)
def squash_value(norm: str) -> str:
    """:func:`squash` of a value's canonical form without its unit (``24|h`` -> ``24``)."""
    return squash(norm.split("|")[0])


def prefixes(tokens: Iterable[str]) -> frozenset[str]:
    """First :data:`PREFIX` letters of the plain tokens that have at least that many."""
    return frozenset(t[:PREFIX] for t in tokens if len(t) >= PREFIX and not t.startswith("<"))


def close_to_any(x: str, exact: frozenset[str], near: frozenset[str]) -> bool:
    """Whether ``x`` is close to a token of a set (``exact``: the set, ``near``: its
    :func:`prefixes`): equal to one, or (plain, five letters or more) sharing its first five."""
    if x in exact:
        return True
    return len(x) >= PREFIX and not x.startswith("<") and x[:PREFIX] in near


@dataclass(frozen=True)
class Features:
    """Per-entry sets and strings of one analysis (see the module docstring)."""

    squashed: str
    value_keys: frozenset[tuple[str, str]]
    token_set: frozenset[str]
    token_prefixes: frozenset[str]
    content_set: frozenset[str]
    content_order: tuple[str, ...]  # the content tokens in the order a set of them iterates
    content_prefixes: frozenset[str]
    qualifier_kinds: dict[str, frozenset[str]]
    content_keys: tuple[tuple[str, str | None], ...]
    value_tokens: tuple[str, ...]

    @classmethod
    def of(cls, an: Analysis) -> Features:
        kinds: dict[str, set[str]] = {}
        for k, v in an.qualifiers:
            kinds.setdefault(k, set()).add(v)
        order = tuple(set(an.content))
        return cls(
            squashed=squash(an.text),
            value_keys=frozenset((v.kind, v.norm) for v in an.values),
            token_set=frozenset(an.tokens),
            token_prefixes=prefixes(an.tokens),
            content_set=frozenset(an.content),
            content_order=order,
            content_prefixes=prefixes(an.content),
            qualifier_kinds={k: frozenset(v) for k, v in kinds.items()},
            content_keys=tuple((t, _key(t)) for t in order),
            value_tokens=tuple(f"<{v.kind}:{v.norm}>" for v in an.values),
        )


def _key(t: str) -> str | None:
    """The prefix :func:`close_to_any` looks a token up by, or None (a value, a short word)."""
    return t[:PREFIX] if len(t) >= PREFIX and not t.startswith("<") else None
