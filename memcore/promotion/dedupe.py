"""Does MEMORY.md already say this? The check promotion makes before adding an entry.

:func:`already_stated` is the one place that decides (a judge can replace it): exact text
after normalisation (case, punctuation, list markers, memcore's promotion trailer), or
near-exact: the same words but for a few (token-set Jaccard >= 0.8), or, for statements of
at least five content words, the same content words but for a few (the same Jaccard once
function words are dropped and plurals folded: "every new dbt model gets a unique test on its
key" states "dbt models: a unique test on the key of every new model"); always with the same
numbers and the same negations, so "timeout is 30 seconds" never matches "timeout is 60
seconds", and never with one content word put in place of another ("Ana owns the billing
service" is not "Ana owns the payments service", however long the rest they share): words may
be added, dropped or inflected, not swapped.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import Generic, Protocol, TypeVar

NEAR_JACCARD = 0.8
_TRAILER_RE = re.compile(r"\s*\[score=[0-9.]+\s+recalls=\d+\s+avg=[0-9.]+\s+source=[^\]]*\]\s*$")
_LIST_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)
_NEGATIONS = frozenset({"no", "not", "never", "none", "without", "cannot", "dont", "doesnt"})
#: English function words, dropped before the content-word comparison.
_FUNCTION_WORDS = frozenset(
    "a an the of on in at to for from by with and or is are was were be been its it this that "  # noqa: SIM905
    "these those as into onto per".split()
)
#: Statements shorter than this in content words are compared on every word only.
MIN_CONTENT_WORDS = 5
#: Words that may be swapped for one another without changing the fact (quantifiers, persons,
#: auxiliaries): "use pnpm for all installs" states "we use pnpm for every install".
_SOFT_WORDS = frozenset(
    "all every each any some always we our us i my me you your they their should must will "  # noqa: SIM905
    "would can do does did has have had so then also just".split()
)
#: Two words of one stem share at least this many leading letters ("deploy", "deployed").
_STEM = 4


class HasText(Protocol):
    @property
    def text(self) -> str: ...


T = TypeVar("T", bound=HasText)


def normalized(text: str) -> str:
    """Lowercase words of ``text`` joined by single spaces (markup and trailer dropped)."""
    text = _TRAILER_RE.sub("", text.strip())
    text = _LIST_RE.sub("", text)
    return " ".join(_WORD_RE.findall(text.lower().replace("'", "")))


def _facts(tokens: set[str]) -> tuple[frozenset[str], frozenset[str]]:
    return (
        frozenset(t for t in tokens if any(ch.isdigit() for ch in t)),
        frozenset(tokens & _NEGATIONS),
    )


def content_words(tokens: set[str]) -> frozenset[str]:
    """``tokens`` without function words, a plural ``s`` folded (``models`` -> ``model``)."""
    return frozenset(_fold(t) for t in tokens if t not in _FUNCTION_WORDS)


def _fold(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def content_sequence(norm: str) -> list[str]:
    """The content words of a normalised text in their order (see :func:`content_words`)."""
    return [_fold(t) for t in norm.split() if t not in _FUNCTION_WORDS]


def _swapped(ours: list[str], theirs: list[str]) -> bool:
    """True when, the two texts' content words aligned in order, a stretch of one is replaced
    by a stretch of the other that names another thing (a content word that is neither a soft
    word nor an inflection of one on the other side): "billing" where the other says
    "payments". Words added or dropped, or moved elsewhere, are no swap."""
    matcher = SequenceMatcher(None, ours, theirs, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        mine = [w for w in ours[i1:i2] if w not in _SOFT_WORDS]
        other = [w for w in theirs[j1:j2] if w not in _SOFT_WORDS]
        if mine and other and any(not any(_one_stem(a, b) for b in other) for a in mine):
            return True
    return False


def _one_stem(a: str, b: str) -> bool:
    return len(a) >= _STEM and len(b) >= _STEM and a[:_STEM] == b[:_STEM]


def _jaccard(a: set[str] | frozenset[str], b: set[str] | frozenset[str], shared: int) -> float:
    return shared / (len(a) + len(b) - shared)


def already_stated(candidate_text: str, entries: Sequence[T]) -> T | None:
    """The entry of ``entries`` that states what ``candidate_text`` states, or None."""
    return StatedIndex(entries).find(candidate_text)


class StatedIndex(Generic[T]):
    """:func:`already_stated` over many candidates: the entries are indexed once."""

    def __init__(self, entries: Sequence[T]) -> None:
        self._entries: list[T] = list(entries)
        self._exact: dict[str, int] = {}
        self._tokens: list[set[str]] = []
        self._content: list[frozenset[str]] = []
        self._sequence: list[list[str]] = []
        self._postings: dict[str, list[int]] = {}
        for i, e in enumerate(self._entries):
            self.add(e, i)

    @property
    def entries(self) -> list[T]:
        return self._entries

    def add(self, entry: T, index: int | None = None) -> None:
        """Index one more entry (a candidate accepted earlier in the same batch)."""
        if index is None:
            self._entries.append(entry)
            index = len(self._entries) - 1
        norm = normalized(entry.text)
        self._exact.setdefault(norm, index)
        toks = set(norm.split())
        self._tokens.append(toks)
        self._content.append(content_words(toks))
        self._sequence.append(content_sequence(norm))
        for t in toks:
            self._postings.setdefault(t, []).append(index)

    def find(self, candidate_text: str) -> T | None:
        norm = normalized(candidate_text)
        if not norm:
            return None
        hit = self._exact.get(norm)
        if hit is not None:
            return self._entries[hit]
        toks = set(norm.split())
        facts = _facts(toks)
        shared: Counter[int] = Counter()
        for t in toks:
            shared.update(self._postings.get(t, ()))
        content = content_words(toks)
        best: tuple[float, int] | None = None
        for i, n in shared.items():
            other = self._tokens[i]
            jac = _jaccard(toks, other, n)
            theirs = self._content[i]
            if jac < NEAR_JACCARD and min(len(content), len(theirs)) >= MIN_CONTENT_WORDS:
                jac = max(jac, _jaccard(content, theirs, len(content & theirs)))
            if (
                jac >= NEAR_JACCARD
                and _facts(other) == facts
                and (best is None or jac > best[0])
                and not _swapped(content_sequence(norm), self._sequence[i])
            ):
                best = (jac, i)
        return self._entries[best[1]] if best is not None else None
