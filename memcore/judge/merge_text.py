"""The offline, lossless merged text of a ``same`` cluster.

    text = merge_text(keeper_text, [other_text, ...])   # str, or None: wait for review

The result is the keeper plus only the details it lacks, woven in as a clause ("..., behind
Envoy", "... and keeps the Figma library up to date") or, when the other entry says the rest
in other words or another language, as a parenthesis of the missing details ("... (cargo-
zigbuild)"). Never a second copy of the sentence: when the missing details sit in a clause
that restates most of the keeper, or the text would still lose a detail, the answer is None
and the cluster waits for review.

:func:`choose_keeper` picks the member to keep: a pinned one, else the one naming the most
details, else the one writing more numbers as digits, else the newest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memcore.judge.analysis import Analyzer
from memcore.judge.protocol import EntryView
from memcore.judge.validate import missing_details

_CLAUSE_RE = re.compile(r"\s*(?:[,;:]\s+|\s[–—-]\s|\s(?:and|with|but|because|so)\s|\()\s*")
_DEFAULT = Analyzer()


def _clauses(text: str) -> list[tuple[str, str]]:
    """(joiner, clause) pieces of one sentence; the joiner is what led into the clause."""
    out: list[tuple[str, str]] = []
    pos, joiner = 0, ""
    for m in _CLAUSE_RE.finditer(text):
        piece = text[pos : m.start()].strip(" .)")
        if piece:
            out.append((joiner, piece))
        joiner, pos = m.group(0).strip(), m.end()
    tail = text[pos:].strip(" .)")
    if tail:
        out.append((joiner, tail))
    return out


def _content(an: Analyzer, text: str) -> set[str]:
    return {t for t in an.analyse(text).content if not t.startswith("<")}


def _insert_after_anchor(body: str, other: str, detail: str) -> str | None:
    """``body`` with ``detail`` put right after the word that precedes it in ``other``
    ("Meilisearch 1.8"), when that word occurs once in ``body``; else None."""
    at = other.casefold().find(detail.casefold())
    if at <= 0:
        return None
    before = re.findall(r"[\w'’.-]+", other[:at])
    if not before:
        return None
    anchor = before[-1]
    hits = [m for m in re.finditer(rf"(?<![\w-]){re.escape(anchor)}(?![\w-])", body, re.I)]
    if len(hits) != 1:
        return None
    pos = hits[0].end()
    return body[:pos] + " " + detail + body[pos:]


def merge_text(keeper: str, others: Sequence[str], analyzer: Analyzer | None = None) -> str | None:
    """The keeper with the details of ``others`` it lacks woven in, or None when that cannot be
    written losslessly without repeating the sentence."""
    an = analyzer or _DEFAULT
    text = keeper.strip()
    end = text[-1] if text and text[-1] in ".!?。" else ""
    body = text[:-1].rstrip() if end else text
    lang = an.analyse(keeper).lang
    for other in others:
        other = other.strip()
        o_an, b_an = an.analyse(other), an.analyse(body)
        covers = b_an.content <= o_an.content and not missing_details([body], other, an)
        more = b_an.content < o_an.content or len(o_an.values) > len(b_an.values)
        if o_an.lang == lang and covers and more:
            body = other[:-1].rstrip() if other[-1:] in ".!?。" else other  # says it all, and more
            continue
        lost = missing_details([other], body, an)
        pieces = _clauses(other)
        body_words = _content(an, body)
        if o_an.lang == lang and len(pieces) > 1:
            for joiner, clause in pieces:
                words = _content(an, clause)
                if words and len(words & body_words) <= 0.5 * len(words):
                    joiner = joiner if joiner and joiner not in ("(", ":") else ","
                    sep = ", " if joiner == "," else "; " if joiner == ";" else f" {joiner} "
                    body = body.rstrip(",;") + sep + clause
                    body_words |= words
        rest = []
        for d in missing_details([other], body, an):
            placed = _insert_after_anchor(body, other, d) if o_an.lang == lang else None
            if placed is None:
                rest.append(d)
            else:
                body = placed
        if rest:
            body = body + " (" + ", ".join(rest) + ")"
        del lost
    if missing_details([keeper, *others], body, an):
        return None
    if len(body) > len(keeper) + sum(len(o) for o in others) * 0.7 + 10:
        return None  # it would read as two sentences glued together
    return body + end


def choose_keeper(members: Sequence[EntryView], analyzer: Analyzer | None = None) -> EntryView:
    """The member a merge keeps: pinned first, then the most details, then the most numbers
    written as digits ("12 partitions" is what a search for 12 finds; "twelve" is not), then
    the newest."""
    an = analyzer or _DEFAULT

    def rank(m: EntryView) -> tuple[bool, int, int, str, int]:
        values = an.analyse(m.text).values
        digits = sum(1 for v in values if v.kind == "num" and any(c.isdigit() for c in v.raw))
        return (m.pinned, len(values), digits, m.created_at, len(m.text))

    return max(members, key=rank)
