"""Details and contradictions between two entries on the same subject (no model needed).

Every embedding model scores "uses port 8080" and "uses port 9090" as near-duplicates, so a
merge candidate pair must pass :func:`contradiction` first. The same detail extractor tells
whether an absorbed entry holds something the keeper lacks (a number, a name, a path, a
version, an identifier): such a merge is never silent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from functools import lru_cache

_WORD_RE = re.compile(r"\w+(?:['’]\w+)?", re.UNICODE)
_NUM_RE = re.compile(r"(?<![\w.])v?\d+(?:[.,:/-]\d+)*(?:[a-z%]{0,3})?(?![\w])", re.IGNORECASE)
_PATH_RE = re.compile(
    r"(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?|\b[\w-]+(?:/[\w.@+-]+)+|\b[\w-]+\.(?:py|md|toml|json|ya?ml|js|ts|sh|txt|cfg|ini|sql|rs|go|c|h|html|css|lock)\b"
)
_URL_RE = re.compile(r"\bhttps?://\S+|\b[\w.+-]+@[\w-]+\.[\w.]+\b")
_CODE_RE = re.compile(r"`([^`]+)`")
_IDENT_RE = re.compile(
    r"\b(?:[a-z]+_[a-z0-9_]+|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|[A-Za-z]+\.[A-Za-z_][\w.]*\(?\)?|--[a-z][\w-]*)\b"
)
_NAME_RE = re.compile(r"(?<![\w'’])([A-Z][\w'’-]*|[A-Z]{2,}\d*)")
_SENT_START_RE = re.compile(r"(?:^|[.!?:;]\s+|\(\s*|[\"“]\s*)$")

STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "too",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "with",
        "you",
        "your",
        "should",
        "must",
        "also",
        "just",
        "only",
        "all",
        "any",
        "each",
        "every",
        "more",
        "most",
        "very",
        "use",
        "used",
        "uses",
        "using",
        "via",
        "per",
        "always",
    ]
)
NEGATIONS = frozenset(
    [
        "not",
        "no",
        "never",
        "don't",
        "doesn't",
        "didn't",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "won't",
        "can't",
        "cannot",
        "shouldn't",
        "mustn't",
        "without",
        "nobody",
        "nothing",
        "neither",
        "nor",
        "dont",
        "doesnt",
        "isnt",
        "cant",
        "wont",
        "nicht",
        "kein",
        "keine",
        "nie",
        "jamais",
        "pas",
        "ne",
        "nunca",
    ]
)
_CJK_NEG = ("不", "没", "別", "别", "無", "无")
ANTONYMS: tuple[tuple[str, str], ...] = (
    ("dark", "light"),
    ("enabled", "disabled"),
    ("enable", "disable"),
    ("true", "false"),
    ("yes", "no"),
    ("on", "off"),
    ("tabs", "spaces"),
    ("allow", "deny"),
    ("allowed", "forbidden"),
    ("prefer", "avoid"),
    ("prefers", "avoids"),
    ("always", "never"),
    ("sync", "async"),
    ("synchronous", "asynchronous"),
    ("before", "after"),
    ("public", "private"),
    ("required", "optional"),
    ("increase", "decrease"),
    ("larger", "smaller"),
    ("more", "less"),
    ("accept", "reject"),
    ("accepted", "rejected"),
    ("start", "stop"),
    ("include", "exclude"),
    ("included", "excluded"),
    ("monorepo", "polyrepo"),
    ("likes", "dislikes"),
    ("like", "dislike"),
    ("love", "hate"),
    ("up", "down"),
    ("open", "closed"),
    ("online", "offline"),
    ("local", "remote"),
    ("upper", "lower"),
    ("uppercase", "lowercase"),
    ("ascending", "descending"),
    ("min", "max"),
    ("minimum", "maximum"),
    ("first", "last"),
    ("early", "late"),
    ("morning", "evening"),
    ("mornings", "evenings"),
    ("stay", "leave"),
    ("must", "may"),
    ("read-only", "write"),
)
_ANTONYM_OF: dict[str, set[str]] = {}
for _a, _b in ANTONYMS:
    _ANTONYM_OF.setdefault(_a, set()).add(_b)
    _ANTONYM_OF.setdefault(_b, set()).add(_a)


_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


@lru_cache(maxsize=65536)
def words(text: str) -> tuple[str, ...]:
    """Lower-cased word tokens (apostrophes kept inside words); runs of CJK characters, which
    have no spaces, become character bigrams."""
    out: list[str] = []
    for w in _WORD_RE.findall(text):
        w = w.lower().replace("’", "'")
        if _CJK_RE.search(w) and len(w) > 2:
            out.extend(w[i : i + 2] for i in range(len(w) - 1))
        else:
            out.append(w)
    return tuple(out)


def _stem(w: str) -> str:
    """A crude stem: common suffixes off, then at most 6 characters (release/releases)."""
    for suf in ("ing", "ed", "es", "s"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            w = w[: -len(suf)]
            break
    return w[:6]


@lru_cache(maxsize=65536)
def content_words(text: str) -> frozenset[str]:
    """Stemmed content words (no stop words, no negations, no pure numbers)."""
    return frozenset(
        _stem(w) for w in words(text) if w not in STOP and w not in NEGATIONS and not w.isdigit()
    )


def _norm_num(tok: str) -> str:
    return tok.lower().lstrip("v").rstrip(".,")


@lru_cache(maxsize=65536)
def details(text: str) -> frozenset[str]:
    """Specific things a text names: numbers, versions, paths, URLs, identifiers, proper names."""
    out: set[str] = set()
    for m in _URL_RE.finditer(text):
        out.add("url:" + m.group(0).rstrip(".,;)").lower())
    for m in _PATH_RE.finditer(text):
        out.add("path:" + m.group(0).rstrip(".,;)").lower())
    for m in _CODE_RE.finditer(text):
        out.add("code:" + m.group(1).strip().lower())
    for m in _IDENT_RE.finditer(text):
        out.add("id:" + m.group(0).lower())
    for m in _NUM_RE.finditer(text):
        out.add("num:" + _norm_num(m.group(0)))
    for m in _NAME_RE.finditer(text):
        before = text[: m.start()]
        if _SENT_START_RE.search(before):
            continue  # a capital at the start of a sentence says nothing
        w = m.group(1).lower().replace("’", "'")
        if w in STOP or w in NEGATIONS:
            continue
        out.add("name:" + w)
    return frozenset(out)


def _covered(detail: str, other_text_lower: str, other_details: frozenset[str]) -> bool:
    if detail in other_details:
        return True
    value = detail.split(":", 1)[1]
    return value in other_text_lower


def unique_details(absorbed: str, keeper: str) -> list[str]:
    """Details of ``absorbed`` that ``keeper`` does not hold (sorted, without their kind)."""
    kd = details(keeper)
    low = keeper.lower()
    return sorted(d.split(":", 1)[1] for d in details(absorbed) if not _covered(d, low, kd))


def unique_content(absorbed: str, keeper: str) -> list[str]:
    """Content words of ``absorbed`` missing from ``keeper``."""
    return sorted(content_words(absorbed) - content_words(keeper))


@lru_cache(maxsize=65536)
def _has_negation(text: str) -> bool:
    ws = words(text)
    if any(w in NEGATIONS or w.endswith("n't") for w in ws):
        return True
    return any(ch in text for ch in _CJK_NEG)


@lru_cache(maxsize=262144)
def _similar(x: str, y: str) -> bool:
    if x == y or _stem(x) == _stem(y):
        return True
    common = next(
        (i for i, (p, q) in enumerate(zip(x, y, strict=False)) if p != q), min(len(x), len(y))
    )
    if common >= 3 and common >= 0.6 * min(len(x), len(y)):
        return True
    return SequenceMatcher(None, x, y).ratio() >= 0.8


def _value_words(ds: frozenset[str]) -> set[str]:
    out: set[str] = set()
    for d in ds:
        out.update(_stem(w.lower()) for w in _WORD_RE.findall(d.split(":", 1)[1]))
    return out


def _jaccard(a: str, b: str) -> float:
    """Overlap of the content words, leaving out the values each side has alone: how much
    the two texts talk about the same thing."""
    da, db = details(a), details(b)
    ca = content_words(a) - _value_words(da - db)
    cb = content_words(b) - _value_words(db - da)
    return len(ca & cb) / len(ca | cb) if ca | cb else 1.0


@lru_cache(maxsize=65536)
def _valueish(text: str) -> set[str]:
    """Lower-cased tokens that look like values: capitalised words, and tokens with digits."""
    return {
        w.lower().replace("’", "'")
        for w in _WORD_RE.findall(text)
        if w[:1].isupper() or any(ch.isdigit() for ch in w)
    }


def _slots(text: str, only: Sequence[str]) -> set[tuple[str, str]]:
    """Where differing values sit: the folder of a path, the unit after a number ("25 MB")
    and the word before it ("port 8080"). Two texts with a different value in the same slot
    contradict even when they are worded differently."""
    out: set[tuple[str, str]] = set()
    toks = list(words(text))
    for d in only:
        kind, value = d.split(":", 1)
        if kind == "path" and "/" in value.strip("/"):
            out.add(("dir", value.rstrip("/").rsplit("/", 1)[0]))
        elif kind == "num":
            parts = [w for w in _WORD_RE.findall(value)]
            if not parts:
                continue
            for k, w in enumerate(toks):
                if w == parts[0].lower():
                    if k + len(parts) < len(toks):
                        nxt = toks[k + len(parts)]
                        if not nxt.isdigit() and nxt not in STOP:
                            out.add(("unit", nxt))
                    if k > 0 and toks[k - 1] not in STOP:
                        out.add(("prev", toks[k - 1]))
    return out


def _substitution(a: str, b: str) -> str | None:
    """The one short value swapped between two otherwise equal sentences ("Emma maintains the
    indexer" / "Frank maintains the indexer"), or None."""
    ta, tb = list(words(a)), list(words(b))
    if max(len(ta), len(tb)) > 80:
        return None  # a sentence-level rule; aligning long texts word by word costs too much
    set_a, set_b = set(ta), set(tb)
    if set_a == set_b:
        return None  # the same words: a light edit
    only_a = [w for w in set_a - set_b if w not in STOP]
    only_b = [w for w in set_b - set_a if w not in STOP]
    if not only_a or not only_b or len(only_a) > 3 or len(only_b) > 3:
        return None  # nothing swapped, or more than one short value differs
    if len(set_a & set_b) < 0.5 * max(len(set_a), len(set_b)):
        return None
    caps_a, caps_b = _valueish(a), _valueish(b)
    sm = SequenceMatcher(None, ta, tb, autojunk=False)
    equal = sum(size for *_, size in sm.get_matching_blocks())
    if equal < 0.5 * max(len(ta), len(tb), 1):
        return None
    swaps = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "replace":
            continue
        sa = [w for w in ta[i1:i2] if w not in STOP]
        sb = [w for w in tb[j1:j2] if w not in STOP]
        if not sa or not sb:
            continue
        if all(any(_similar(x, y) for y in sb) for x in sa) or all(
            any(_similar(y, x) for x in sa) for y in sb
        ):
            continue
        va, vb = any(x in caps_a for x in sa), any(y in caps_b for y in sb)
        one_sided = (
            (va or vb) and equal >= 0.6 * max(len(ta), len(tb)) and max(len(sa), len(sb)) <= 2
        )
        if (va and vb) or one_sided:
            swaps.append((sa, sb))
        else:
            return None  # a reworded phrase, not a swapped value
    if len(swaps) == 1 and len(swaps[0][0]) <= 3 and len(swaps[0][1]) <= 3:
        return f"differing values: {' '.join(swaps[0][0])} vs {' '.join(swaps[0][1])}"
    return None


def contradiction(a: str, b: str) -> str | None:
    """Why ``a`` and ``b`` (already on the same subject) contradict, or None.

    Opposite values (antonyms), a negation on one side only of otherwise the same words, one
    short value swapped in otherwise equal sentences, or specific values that differ both ways
    (each names a number, name, path or version the other lacks) on a shared subject.
    """
    wa, wb = set(words(a)), set(words(b))
    for w in wa - wb:
        for opp in _ANTONYM_OF.get(w, ()):
            if opp in wb and opp not in wa:
                return f"opposite values: {w} vs {opp}"
    if _has_negation(a) != _has_negation(b) and _jaccard(a, b) >= 0.5:
        return "negation on one side"
    jac = _jaccard(a, b)
    if jac >= 0.15:  # cheap set work first; the word alignment below is slower
        da, db = details(a), details(b)
        la, lb = a.lower(), b.lower()
        only_a = sorted(d for d in da if not _covered(d, lb, db))
        only_b = sorted(d for d in db if not _covered(d, la, da))
        kinds_a = {d.split(":", 1)[0] for d in only_a}
        kinds_b = {d.split(":", 1)[0] for d in only_b}
        both_ways = bool(only_a and only_b)
        same_slot = both_ways and bool(_slots(a, only_a) & _slots(b, only_b))
        if both_ways and (
            same_slot or (jac >= 0.4 and (kinds_a & kinds_b or "num" in kinds_a | kinds_b))
        ):
            va = ", ".join(d.split(":", 1)[1] for d in only_a[:3])
            vb = ", ".join(d.split(":", 1)[1] for d in only_b[:3])
            return f"differing values: {va} vs {vb}"
    return _substitution(a, b)


def topic(a: str, b: str, limit: int = 6) -> str:
    """A few words both texts share, in ``a``'s order: the subject a conflict is about."""
    shared = set(content_words(a) & content_words(b))
    out: list[str] = []
    for w in words(a):
        s = _stem(w)
        if s in shared and w not in out:
            out.append(w)
            shared.discard(s)
        if len(out) >= limit:
            break
    return " ".join(out) if out else a[:40]
