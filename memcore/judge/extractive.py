"""The offline extractive "model": deterministic sentence picking over a JSON request.

It keeps the current memory's entries unless a newer sentence replaces them, adds sentences
that state a decision, convention, preference, tool quirk or lesson, drops chatter and
progress talk, strips PR numbers and commit hashes, merges near-duplicates (counting how often
a point recurs) and fits the character limit, dropping the weakest entries first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

CATEGORIES: list[tuple[str, float, re.Pattern[str]]] = [
    (
        "decision",
        1.0,
        re.compile(
            r"\b(?:we|i|team)\s+(?:have\s+|now\s+)?"
            r"(?:decided|agreed|chose|settled on|picked|went with|"
            r"standardi[sz]ed on)\b|\bdecision\b|"
            r"\blet'?s (?!see\b|look\b|check\b|try\b|find\b|figure\b|debug\b|start\b|begin\b|"
            r"take\b|get\b|do\b|chat\b|talk\b|wait\b|hope\b)[a-z]+\b|"
            r"\bwe(?:'ll| will) (?:use|keep|go with|switch)\b|\bgoing forward\b|\bfrom now on\b|"
            r"\bswitch(?:ed)? (?:over )?(?:to|from)\b|\bmigrat(?:e|ed) to\b|\bwe use\b",
            re.I,
        ),
    ),
    (
        "convention",
        0.9,
        re.compile(
            r"\b(?:always|never)\b|\bconvention\b|\bmust(?:n't| not)?\b|"
            r"\bshould (?:always|never)\b|"
            r"\bnaming\b|\bstyle guide\b|\bis required\b",
            re.I,
        ),
    ),
    (
        "quirk",
        0.85,
        re.compile(
            r"\bquirk\b|\bgotcha\b|\bworkaround\b|\bbeware\b|\bcaveat\b|\bnote that\b|"
            r"\b(?:fails|breaks|hangs|crashes|times out) (?:when|if|on|unless|with)\b|"
            r"\bonly works\b|"
            r"\bdoes(?:n't| not) work\b|\bflaky\b|\bsilently\b",
            re.I,
        ),
    ),
    (
        "lesson",
        0.8,
        re.compile(
            r"\blesson\b|\blearned\b|\bturns out\b|\broot cause\b|\bthe fix (?:was|is)\b|"
            r"\bnext time\b|\bremember to\b|\bmake sure\b|\bthe problem was\b|\bcaused by\b",
            re.I,
        ),
    ),
    (
        "preference",
        0.75,
        re.compile(
            r"\bi (?:prefer|like|want|'d rather|would rather)\b|\bprefer(?:s|red)?\b|"
            r"\bplease (?:don't|do not|always|never|use|keep)\b",
            re.I,
        ),
    ),
]

_CHATTER_START = re.compile(
    r"^(?:thanks|thank you|thx|ok(?:ay)?|great|nice|cool|sure|sounds good|looks good|perfect|"
    r"let me|i'll|i will now|i'm going to|now i|running|done|hi|hello|hey|hmm|yes|no|yep|"
    r"alright|good (?:morning|night|catch)|lol|here(?:'s| is))\b",
    re.I,
)
_PROGRESS = re.compile(
    r"\b(?:wip|in progress|currently (?:running|working)|still running|almost done|"
    r"will report back|todo for today)\b",
    re.I,
)
_HASH_RE = r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"
_PR_RE = r"\b(?:PR|pull request|MR|issue)\s*#?\d+|(?<!\w)#\d+\b"
_PAREN_REF = re.compile(r"\s*\([^()]*(?:" + _PR_RE + "|" + _HASH_RE + r")[^()]*\)", re.I)
_PR = re.compile(r"\s*(?:in |see |via |from )?(?:" + _PR_RE + ")", re.I)
_HASH = re.compile(r"\s*(?:in |at )?(?:\bcommit\s+)?" + _HASH_RE, re.I)
_ROLE = re.compile(
    r"^\[(?:\d+\s+)?(?:user|assistant|tool|system)\]\s*|^(?:user|assistant|system):\s*", re.I
)
_SENT = re.compile(r"(?<=[.!])\s+(?=[A-Z`\"'(])")
_LEAD = re.compile(
    r"^(?:(?:ok(?:ay)?|ugh|yes|yeah|yep|right|great|sure|perfect|good|nice|cool|alright|hmm|so|"
    r"and|also|but|well|btw|by the way|anyway|then)\b[,.!:]?\s+)+",
    re.I,
)
_WORD = re.compile(r"[a-z0-9][a-z0-9_.+-]*")
_REVERSAL = re.compile(
    r"\bno longer\b|\binstead of\b|\breplac(?:e|ed|ing)\b|\bswitch(?:ed)? (?:over )?(?:to|from)\b|"
    r"\bstopped using\b|\bdropp(?:ed|ing)\b|\bmov(?:e|ed) away from\b|\bnot anymore\b",
    re.I,
)
_STOP = set(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "to",
        "of",
        "in",
        "on",
        "for",
        "with",
        "by",
        "at",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "this",
        "that",
        "we",
        "i",
        "you",
        "our",
        "us",
        "they",
        "them",
        "from",
        "will",
        "would",
        "should",
        "can",
        "could",
        "do",
        "does",
        "did",
        "not",
        "no",
        "so",
        "if",
        "then",
        "than",
        "also",
        "all",
        "use",
        "using",
        "used",
        "now",
        "just",
    ]
)
MAX_SENTENCE = 320
MIN_WORDS = 5


@dataclass
class Item:
    text: str
    category: str
    weight: float
    order: int
    existing: bool = False
    recurrence: int = 1
    sources: set[str] = field(default_factory=set)
    words: frozenset[str] = frozenset()

    @property
    def score(self) -> float:
        return self.weight + 0.5 * (self.recurrence - 1) + (0.6 if self.existing else 0.0)


def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1)


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def clean(sentence: str) -> str:
    s = _ROLE.sub("", sentence.strip())
    s = s.lstrip("-*• ").strip()
    lead = _LEAD.match(s)
    if lead and len(s) > lead.end():
        s = s[lead.end()].upper() + s[lead.end() + 1 :]
    s = _PAREN_REF.sub("", s)
    s = _PR.sub("", s)
    s = _HASH.sub("", s)
    return re.sub(r"\s{2,}", " ", s).strip()


def classify(sentence: str) -> tuple[str, float] | None:
    """(category, weight) of a durable sentence, or None for chatter."""
    if len(sentence) > MAX_SENTENCE or len(sentence.split()) < MIN_WORDS:
        return None
    if (
        sentence.rstrip().endswith("?")
        or _CHATTER_START.match(sentence)
        or _PROGRESS.search(sentence)
    ):
        return None
    if sentence.count("`") > 6 or sentence.startswith(("[tool", "{", "$ ", ">>>")):
        return None
    for name, weight, pattern in CATEGORIES:
        if pattern.search(sentence):
            return name, weight
    return None


def sentences(text: str) -> list[str]:
    out: list[str] = []
    in_code = False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            in_code = not in_code
            continue
        if in_code or not line.strip():
            continue
        out.extend(p for p in _SENT.split(_ROLE.sub("", line.strip())) if p.strip())
    return out


def bullets(text: str) -> list[str]:
    lines = [
        ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
    ]
    return [clean(ln) for ln in lines if clean(ln)]


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The extractive answer to a consolidation request (see memcore.sessions.prompts)."""
    limit = int(request.get("limit") or 1200)
    current = request.get("current") or {}
    items: list[Item] = []
    order = 0
    for text in bullets(str(current.get("text") or "")):
        cat = classify(text) or ("note", 0.7)
        items.append(Item(text, cat[0], cat[1], order, existing=True, words=content_words(text)))
        order += 1
    for src in request.get("sources") or []:
        sid = str(src.get("id"))
        is_memory = src.get("kind") in ("memory", "summary")
        pieces = (
            bullets(str(src.get("text") or ""))
            if is_memory
            else sentences(str(src.get("text") or ""))
        )
        for raw in pieces:
            text = clean(raw) if not is_memory else raw
            found = classify(text)
            if (
                found is None
                and is_memory
                and len(text.split()) >= MIN_WORDS
                and len(text) <= MAX_SENTENCE
            ):
                found = ("note", 0.7)  # a lower memory already passed the filter once
            if found is None:
                continue
            order = _add(
                items,
                Item(text, found[0], found[1], order, sources={sid}, words=content_words(text)),
                order,
            )
    return _fit(items, limit)


def _add(items: list[Item], new: Item, order: int) -> int:
    reversal = bool(_REVERSAL.search(new.text))
    for old in items:
        sim = similarity(old.words, new.words)
        overlap = len(old.words & new.words) / max(1, len(old.words))
        if sim >= 0.6 or (reversal and overlap >= 0.4 and old.category == new.category):
            # a later statement of the same point replaces the earlier wording
            old.text, old.words = new.text, new.words
            old.recurrence += 1
            old.sources |= new.sources
            old.weight = max(old.weight, new.weight)
            return order
    items.append(new)
    return order + 1


def _fit(items: list[Item], limit: int) -> dict[str, Any]:
    ranked = sorted(items, key=lambda it: (-it.score, it.order))
    chosen: list[Item] = []
    size = 0
    for it in ranked:
        line = f"- {it.text}"
        extra = len(line) + (1 if chosen else 0)
        if size + extra > limit:
            continue
        chosen.append(it)
        size += extra
    chosen.sort(key=lambda it: it.order)
    used = sorted({s for it in chosen for s in it.sources})
    return {"memory": "\n".join(f"- {it.text}" for it in chosen), "used": used}
