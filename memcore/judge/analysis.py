"""Offline analysis of one memory entry: subject, attribute, qualifiers, values, change wording.

    analyzer = Analyzer.for_texts(all_entry_texts)   # learns "TF (Terraform)" and names
    an = analyzer.analyse("Atlas moved its metrics endpoint to port 9464.")
    an.values      -> (Value(kind="num", norm="9464", slot="port", ...),)
    an.change      -> True ("moved")
    an.subject     -> {"atlas"}

What the analysis holds:

* ``lang``: en, fr, de, es, zh, ja (by script and stop words) or ``other``.
* ``tokens``: the canonical token sequence: lower-cased, aliases resolved (``k8s`` ->
  ``kubernetes``), counts written as words turned into numbers, words stemmed and mapped to a
  synonym group, each value one opaque token (``<num:9464>``). Two paraphrases of one fact
  share most of these; a swapped value shows up as one replaced token.
* ``values``: numbers with units (``24|h``, ``300|kb``), versions, times, paths, URLs, hosts
  and other identifiers, code spans, names (capitalised words that are not sentence starts).
  Each has a ``slot`` (the unit, the noun it counts, or the word before it) so that "port
  9100" and "port 9464" compare as one attribute with two values.
* ``qualifiers``: (kind, value) pairs that make two otherwise contradictory statements both
  true: environments, components, platforms, roles, plan tiers, limit kinds (default / max /
  min / soft / hard), time windows, read vs write, regions, the owner ("Kofi's"), draft vs
  published, and weak kinds (language, file format, connection) that separate only together
  with another difference.
* ``change``: the change markers the text carries ("moved", "now", "no longer", "replaced",
  "switched", "instead", "deprecated", ... and cheap fr/de/es equivalents).
* ``negated``: a negation word in any of the six languages.

Everything is a pure function of the text and the analyzer's tables; results are cached.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from memcore.judge.aliases import (
    NUMBER_WORDS,
    ONES,
    SYNONYMS,
    UNITS,
    AliasTable,
    words,
    wordset,
)
from memcore.judge.features import Features

# -- word lists ---------------------------------------------------------------------------

STOP = wordset(
    """a an the and or but of to in on at by for from with without into onto over under as is
    are was were be been being am do does did done has have had having it its this that these
    those there here than then so such very just only also too all any each every some no not
    via per our we us you your i me my they them their he she his her him who whom which what
    when where while why how if else about up down out off again once can could should would
    will shall may might must let lets get gets got more most less least other same own both
    either neither nor one's s t d ll re ve m o y n't"""
)
_STOP_LANG: dict[str, frozenset[str]] = {
    "en": wordset("the is are of and to in with for on was were be has have that it by"),
    "fr": wordset(
        "le la les de des du est sont et dans avec pour une un se sur au aux par pas qui que "
        "l d en ne"
    ),
    "de": wordset(
        "der die das und ist sind mit von für wird werden den dem ein eine nicht auf im zu "
        "des bei am"
    ),
    "es": wordset("el la los las de del es son y en con para una un se por que al lo su sus"),
}
OTHER_STOP = frozenset().union(*(_STOP_LANG[k] for k in ("fr", "de", "es"))) - {"pas"}
NEGATIONS = wordset(
    """not no never none nothing nobody without cannot dont doesnt isnt arent wasnt werent wont
    cant shouldnt mustnt didnt nicht kein keine keinen nie niemals jamais pas aucun aucune ne
    nunca ningún ninguna"""
)
_NOT_NEGATION_RE = re.compile(r"\bno (?:more|less|later|earlier|fewer) than\b|\bnot only\b")
_CONTRAST_RE = re.compile(
    r"\brather than\b|\binstead of\b|\bplutôt que\b|\bstatt\b|\ben lugar de\b"
)
_CJK_NEG = ("不", "没", "別", "别", "無", "无", "ない", "ません")

_CHANGE_RE = re.compile(
    r"\b(?:now|no longer|not any ?more|any ?more|moved|moves|moving|switched|switching|"
    r"replaced|replaces|replacing|instead|deprecated|migrated|migrating|upgraded|bumped|"
    r"downgraded|took over|taken over|handed (?:it )?over|renamed|dropped|retired|stopped|"
    r"changed|rewritten|removed|cancell?ed|gone|frozen|adopted|is back|are back|back on|"
    r"again|from now on|going forward|passed to|down to|lifted|abandoned|phased out|"
    r"superseded|sunset|sunsetted|end of life|transitioned|tightened|raised to|lowered to|"
    r"increased to|reduced to|"
    r"under the new|this year|"
    r"(?:since|after) the (?:[\w-]+ )?(?:change|upgrade|migration|move|switch|incident|"
    r"rewrite|update|bump|outage|report|review|audit|reorg)|"
    r"désormais|maintenant|remplacée?s?|migrée?s?|déplacée?s?|"
    r"jetzt|nun|nicht mehr|kein\w* mehr|ersetzt|umgestellt|gewechselt|migriert|verschoben|"
    r"stattdessen|ahora|ya no|reemplaz\w+|sustitu\w+|migr[óa]\w*|en lugar de|en vez de)\b"
    r"|\bn[e']\s*\w+ plus\b",
    re.IGNORECASE,
)
# what a change marker names as the old value: "from X", "replaced X", "X is gone", ...
_CHANGE_OBJECT_RE = re.compile(
    r"\b(?:from|off|out of|took over from|instead of|replac\w*)\s+"  # "from X to Y": X only
    r"((?:(?!(?:to|with|for|and|onto|into|by|instead|now|in|at|on|so|since|after|last)\b)"
    r"[\w@#./:+-]+\s*){1,4})"
    r"|\b(?:no longer(?: uses?| using| needs?)?|dropp\w*|stopped using|retir\w*|remov\w*|"
    r"deprecat\w*)\s+((?:[\w@#./:+-]+\s*){1,4})"
    r"|((?:[\w@#./:+-]+\s+){1,4})(?:is|are|was|were|has been|have been)\s+(?:now\s+)?"
    r"(?:gone|removed|dropped|retired|deprecated|cancell?ed|frozen|replaced|sunset)\b",
    re.IGNORECASE,
)
_TYPE_LEAD_RE = re.compile(
    r"^\s*(?:(?:decided|decision|learned(?: the hard way)?|lessons?(?: learned)?|note|summary"
    r"|todo|fyi|reminder|tip|convention|preference|fact)\s*:\s*"
    r"|(?:decided|learned|noted|remember)\s+that\s+)",
    re.IGNORECASE,
)
# every alternative of _CHANGE_OBJECT_RE needs one of these words (a cheap test first: the
# full pattern backtracks at every word of the text)
_CHANGE_OBJECT_HINT_RE = re.compile(
    r"from|off|out of|instead of|replac|no longer|dropp|stopped using|retir|remov|deprecat|"
    r"gone|cancel|frozen|sunset",
    re.IGNORECASE,
)
_CJK_CHANGE = ("现在", "改为", "替换", "不再", "変更", "移行", "もう", "今は", "現在")

# Words one of which every change marker of _CHANGE_RE contains (lower-cased, ASCII): an
# ASCII text with none of them has no marker, and the pattern (tried at every place of the
# text) need not run. A marker added to _CHANGE_RE needs its word here.
_CHANGE_KEYS = (
    *words(
        """now longer more mov switch replac instead deprecat migr upgrad bump downgrad over
        renamed dropped retired stopped changed rewritten removed cancel gone frozen adopted back
        again forward passed down lifted abandon phased supersed sunset transition tighten
        raised lowered increased reduced maintenant jetzt nun mehr ersetzt umgestellt
        gewechselt verschoben stattdessen ahora reemplaz sustitu plus"""
    ),
    *("end of life", "under the new", "this year", "since the", "after the", "ya no"),
    *("en lugar de", "en vez de"),
)
# _CHANGE_OBJECT_HINT_RE's words (it is a case-insensitive search for any of them)
_CHANGE_OBJECT_HINTS = (
    *words("from off replac dropp retir remov deprecat gone cancel frozen sunset"),
    *("out of", "instead of", "no longer", "stopped using"),
)


def _change_words(text: str) -> set[str]:
    """The change markers of ``text``, lower-cased (_CHANGE_RE's and the CJK ones)."""
    if text.isascii():  # (no CJK marker then, and lower() is the pattern's case folding)
        low = text.lower()
        if not any(k in low for k in _CHANGE_KEYS):
            return set()
    change = {m.group(0).lower() for m in _CHANGE_RE.finditer(text)}
    change |= {c for c in _CJK_CHANGE if c in text}
    return change


def _has_change_object_hint(text: str) -> bool:
    """``_CHANGE_OBJECT_HINT_RE.search(text)`` is not None (substring tests for ASCII text)."""
    if text.isascii():
        low = text.lower()
        return any(k in low for k in _CHANGE_OBJECT_HINTS)
    return _CHANGE_OBJECT_HINT_RE.search(text) is not None


# qualifier phrases on the canonical token string: regex -> (kind, value)
_Q: list[tuple[str, str, str]] = [
    (
        "outside business hours|outside of business hours|after hours|out of hours|off hours",
        "window",
        "after-hours",
    ),
    ("business hours|office hours|working hours", "window", "business-hours"),
    ("weekday|weekdays|week day|week days", "window", "weekdays"),
    ("weekend|weekends", "window", "weekends"),
    ("night|nights|nightly|overnight", "window", "night"),
    ("daytime|during the day", "window", "day"),
    ("production", "env", "production"),
    ("staging", "env", "staging"),
    ("development", "env", "dev"),
    ("sandbox", "env", "sandbox"),
    ("locally|local machine|local", "env", "local"),
    ("in continuous_integration|on continuous_integration", "env", "ci"),
    ("api", "component", "api"),
    ("worker|workers", "component", "worker"),
    ("frontend|front end", "component", "frontend"),
    ("backend|back end", "component", "backend"),
    ("dashboard|dashboards", "component", "dashboard"),
    ("sidecar", "component", "sidecar"),
    ("scheduler", "component", "scheduler"),
    ("ios", "platform", "ios"),
    ("android", "platform", "android"),
    ("macos", "platform", "macos"),
    ("linux", "platform", "linux"),
    ("windows", "platform", "windows"),
    ("web", "platform", "web"),
    ("admin|admins|administrator|administrators", "role", "admin"),
    ("viewer|viewers|read only users|read only user", "role", "viewer"),
    ("anonymous|unauthenticated|logged out|signed out", "role", "anonymous"),
    (
        "signed in|logged in|authenticated users|authenticated user|registered users",
        "role",
        "user",
    ),
    ("guest|guests", "role", "guest"),
    ("free", "tier", "free"),
    ("premium|paid|pro plan|enterprise", "tier", "paid"),
    ("default|by default", "limit", "default"),
    ("maximum|at most|no more than|up to|cap|capped", "limit", "max"),
    ("minimum|at least|or later|or newer|or above|or higher", "limit", "min"),
    ("soft", "limit", "soft"),
    ("hard", "limit", "hard"),
    ("p50|median", "percentile", "p50"),
    ("p95", "percentile", "p95"),
    ("p99", "percentile", "p99"),
    ("read replica|read replicas|read|reads|read path", "rw", "read"),
    (
        "write|writes|write path|primary database|primary instance|primary node|the primary",
        "rw",
        "write",
    ),
    ("draft|drafts", "state", "draft"),
    ("published", "state", "published"),
    ("internal", "exposure", "internal"),
    ("public|external", "exposure", "public"),
    ("eu|europe|european", "region", "eu"),
    ("us|usa|north america", "region", "us"),
    ("uk|british", "region", "uk"),
    ("apac|asia", "region", "apac"),
    ("work laptop|work machine|work computer|work desktop|work pc", "device", "work"),
    (
        "personal laptop|personal machine|home machine|home laptop|home desktop|home computer"
        "|home pc",
        "device",
        "personal",
    ),
    (
        "personal project|personal projects|side project|side projects|hobby project"
        "|hobby projects|personal repos|personal repositories|personal code",
        "context",
        "personal",
    ),
    (
        "work project|work projects|at work|work repos|work repositories|work code"
        "|client project|client projects|company projects",
        "context",
        "work",
    ),
    ("pull_request build|pull_request builds", "build", "pr"),
    ("nightly build|nightly builds", "build", "nightly"),
    ("release build|release builds", "build", "release"),
    # weak kinds: they separate two statements only together with another difference
    ("python|go|typescript|javascript|rust|ruby|java|kotlin|swift", "language", "*"),
    ("yaml|json|csv|geojson|shapefile|shapefiles|markdown|html|pdf|xml|parquet", "language", "*"),
    ("websocket|websockets|http|grpc|tcp|udp", "protocol", "*"),
]
WEAK_KINDS = frozenset({"language", "protocol", "owner"})
# phrase (token tuple) -> (kind, value); a longer phrase wins over the words inside it
_QUALIFIER_PHRASES: dict[tuple[str, ...], tuple[str, str]] = {
    tuple(ph.split()): (kind, ph if value == "*" else value)
    for phrases, kind, value in _Q
    for ph in phrases.split("|")
}
_QUALIFIER_LONGEST = max(len(k) for k in _QUALIFIER_PHRASES)


def qualifiers_of(tokens: list[str]) -> set[tuple[str, str]]:
    """The (kind, value) qualifiers named in a canonical token list, longest phrase first."""
    out: set[tuple[str, str]] = set()
    i, n = 0, len(tokens)
    while i < n:
        for span in range(min(_QUALIFIER_LONGEST, n - i), 0, -1):
            hit = _QUALIFIER_PHRASES.get(tuple(tokens[i : i + span]))
            if hit is not None:
                out.add(hit)
                i += span
                break
        else:
            i += 1
    return out


# -- value patterns -----------------------------------------------------------------------

_TOKEN_RE = re.compile(
    r"""(?P<url>\b[a-z][a-z0-9+.-]{1,9}://[^\s<>"')\]]+[^\s<>"')\].,;:!?])
    |(?P<email>\b[\w.+-]+@[\w-]+\.[\w.]+\b)
    |(?P<code>`[^`]+`)
    |(?P<time>\b\d{1,2}:\d{2}(?:\s*[-–]\s*\d{1,2}:\d{2})?\b)
    |(?P<path>(?:~|\.{1,2})?/[\w.@+*<>{}-]+(?:/[\w.@+*<>{}-]*)*
        |\b[\w@.+-]+(?:/[\w.@+*<>{}-]*)+)
    |(?P<handle>[#@][\w][\w./-]*[\w/])
    |(?P<money>[$€£]\s?\d[\d,]*(?:\.\d+)?)
    |(?P<version>\bv\d+(?:\.\d+)*(?:\.x)?\b|(?<![A-Za-z0-9_.])\d+(?:\.\d+)+(?:\.x)?(?!\d|\.\d)
        |(?<![A-Za-z0-9_.])\d+\.x\b)
    |(?P<number>(?<![A-Za-z0-9_.])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?))
        (?P<unit>%|°C|[A-Za-z]{1,3}\b)?
    |(?P<ident>\.?[A-Za-z][\w-]*(?:[.:=][\w-]+)+(?:\(\w*\))?|\.[A-Za-z][\w.-]+
        |\b[A-Za-z]+_[\w]+\b|\b[a-z]+[A-Z]\w*(?:\(\w*\))?)
    |(?P<kebab>\b[\w]+(?:-[\w]+)+\b)
    |(?P<cjk>[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)
    |(?P<word>[^\W\d_][\w]*(?:['’][\w]+)?)
    |(?P<punct>[.;:!?])""",
    re.VERBOSE,
)
_KANA_RE = re.compile(r"[\u3040-\u30ff]")
_HAN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_CJK_UNIT_RE = re.compile(
    r"^(个字符|字符|秒|分钟|分間|分|小时|時間|天|日|周|週間|个月|ヶ月|か月|年|文字|次|回|人)"
)
_SENTENCE_END = {".", ";", ":", "!", "?"}
_SLOT_WORDS = wordset("port version level sdk api node python go rust java ruby release v")
_NOT_NOUNS = wordset("now today again instead directly already yet anymore then later ago")
_STOP_NOT_NOUNS = STOP | _NOT_NOUNS
_PERIODS = wordset("second minute hour day week month year")
_MIXED_CASE_WORDS = wordset("ios macos ipados watchos tvos iphone ipad")


@dataclass(frozen=True)
class Value:
    """One specific thing an entry names. ``norm`` is the canonical form compared across
    entries; ``raw`` is the text as written (what a merged text must keep)."""

    kind: str  # num | time | path | url | ident | code | name | money
    norm: str
    raw: str
    slot: str = ""  # unit, counted noun or the word before it


@dataclass(frozen=True)
class Analysis:
    """The analysis of one entry (see the module docstring)."""

    text: str
    lang: str
    tokens: tuple[str, ...]
    content: frozenset[str]
    values: tuple[Value, ...]
    qualifiers: frozenset[tuple[str, str]]
    subject: frozenset[str]
    names: frozenset[str]
    change: frozenset[str]
    negated: bool
    change_objects: tuple[str, ...] = ()  # lower-cased phrases a change marker points at

    @cached_property
    def value_norms(self) -> frozenset[str]:
        return frozenset(f"{v.kind}:{v.norm}" for v in self.values)

    @cached_property
    def features(self) -> Features:
        """The sets and strings the pair comparison looks things up in, built once."""
        return Features.of(self)

    @property
    def attribute(self) -> frozenset[str]:
        """Content tokens that are neither the subject nor a value: what is said of it."""
        return frozenset(t for t in self.content if t not in self.subject and not t.startswith("<"))

    def to_json(self) -> dict[str, object]:
        """A JSON-able summary (for review items and the agent's MCP view)."""
        return {
            "lang": self.lang,
            "subject": sorted(self.subject),
            "attribute": sorted(self.attribute),
            "qualifiers": sorted(f"{k}:{v}" for k, v in self.qualifiers),
            "values": [{"kind": v.kind, "value": v.raw, "slot": v.slot} for v in self.values],
            "change": sorted(self.change),
            "negated": self.negated,
        }


# -- stemming -----------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude, stable stem: plural and verb endings off, at most 6 characters."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) <= 3 or not w.isalpha():
        return w
    for suf, rep in (("ies", "y"), ("ied", "y"), ("sses", "ss"), ("ing", ""), ("ed", "")):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)] + rep
            break
    else:
        if (w.endswith("es") and w[-3:-2] in ("x", "s", "z")) or w.endswith(("ches", "shes")):
            w = w[:-2]
        elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
            w = w[:-1]
    if w.endswith("ly") and len(w) > 5:
        w = w[:-2]
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]  # create / created / creating
    return w[:6]


_SYN: dict[str, str] = {stem(w): stem(group[0]) for group in SYNONYMS for w in group}


def _canon_word(word: str) -> str:
    s = stem(word)
    return _SYN.get(s, s)


def canon_word(word: str) -> str:
    """A word as it stands in an analysis's tokens (stemmed, synonyms mapped)."""
    return _canon_word(word)


@lru_cache(maxsize=65536)
@lru_cache(maxsize=65536)
def detect_lang(text: str) -> str:
    """en, fr, de, es, zh, ja or other: script first, then the most frequent stop words."""
    if _KANA_RE.search(text):
        return "ja"
    if _HAN_RE.search(text):
        return "zh"
    words = re.findall(r"[^\W\d_]+", text.lower())
    best, score = "other", 0
    for lang, stops in _STOP_LANG.items():
        n = sum(1 for w in words if w in stops)
        if n > score or (n == score and lang == "en" and n > 0):
            best, score = lang, n
    if best == "other" and words:
        best = "en"
    return best


# a chunk between two spaces that is a plain word (ASCII letters, maybe one mark after it):
# the value patterns would read it as that word and that mark (a comma is no token), unless
# it is camelCase ("iPhone": an identifier)
_PLAIN_RE = re.compile(r"([A-Za-z]+)([.;:!?,]?)")
_CAMEL_RE = re.compile(r"[a-z]+[A-Z]")


def _pattern_tokens(text: str, out: list[tuple[str, str]]) -> None:
    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup or "word"
        out.append(("number" if kind == "unit" else kind, m.group(0)))


@lru_cache(maxsize=65536)
def raw_tokens(text: str) -> tuple[tuple[str, str], ...]:
    """The text cut into (kind, surface) tokens by the value patterns (a number with its unit
    is one ``number`` token); computed once per text.

    Plain words between spaces are taken as they are, and only the stretches between them go
    through the patterns (half the time on prose, the same tokens): no pattern reaches
    across a space into a word that starts with a letter, nor matches a plain word as
    anything but a word. A text with a backtick goes through the patterns whole (a code span
    holds spaces)."""
    out: list[tuple[str, str]] = []
    if "`" in text:
        _pattern_tokens(text, out)
        return tuple(out)
    plain, camel = _PLAIN_RE.fullmatch, _CAMEL_RE.match
    start = -1  # where the stretch the patterns must read began (-1: none open)
    pos = 0
    for chunk in text.split(" "):
        m = plain(chunk) if chunk else None
        if m is None or (chunk[0] > "Z" and camel(chunk)):
            if chunk and start < 0:
                start = pos
        else:
            if start >= 0:
                _pattern_tokens(text[start:pos], out)
                start = -1
            out.append(("word", m.group(1)))
            if m.group(2) not in ("", ","):
                out.append(("punct", m.group(2)))
        pos += len(chunk) + 1
    if start >= 0:
        _pattern_tokens(text[start:], out)
    return tuple(out)


def _base(word: str) -> str:
    return word.lower().replace("’", "'").removesuffix("'s")


@lru_cache(maxsize=65536)
def word_bases(text: str) -> frozenset[str]:
    """Every word base (lower-cased, ``'s`` off) the analysis of ``text`` may look up in an
    analyzer's learned names, code spans included: the names an analysis depends on are
    these, intersected with the names of the memory."""
    out: set[str] = set()
    for kind, surf in raw_tokens(text):
        if kind == "word":
            out.add(_base(surf))
        elif kind == "code":
            out |= word_bases(surf.strip("`").strip())
    return frozenset(out)


def _num(s: str) -> str:
    s = s.replace(",", "")
    try:
        f = float(s)
    except ValueError:
        return s
    return str(int(f)) if f == int(f) else repr(f)


# -- the analyzer -------------------------------------------------------------------------


@dataclass
class Analyzer:
    """Analyses entries with the built-in alias table plus what the memory itself defines.
    ``names``: lower-cased words the memory writes capitalised in mid-sentence (so "Atlas"
    at the start of a sentence is still a name)."""

    aliases: AliasTable = field(default_factory=AliasTable.builtin)
    names: frozenset[str] = frozenset()
    _cache: dict[str, Analysis] = field(default_factory=dict, repr=False)
    # analyses started by analyse_soon and not collected yet: text -> the call that waits
    _soon: dict[str, Callable[[], None]] = field(default_factory=dict, repr=False, compare=False)
    _pid: int = field(default_factory=os.getpid, repr=False, compare=False)

    @classmethod
    def for_texts(cls, texts: Iterable[str]) -> Analyzer:
        """An analyzer that knows the aliases and names defined by ``texts`` (the memory)."""
        texts = list(texts)
        aliases = AliasTable.builtin()
        aliases.learn(texts)
        names: set[str] = set()
        for t in texts:
            prev = "."
            if detect_lang(t) == "de":
                continue  # German capitalises every noun
            for kind, surf in raw_tokens(t):
                if kind == "word" and surf[0].isupper() and prev not in _SENTENCE_END:
                    base = _base(surf)
                    if base not in STOP and base not in OTHER_STOP:
                        names.add(base)
                prev = surf if kind == "punct" else "w"
        return cls(aliases=aliases, names=frozenset(names))

    def preload(self, analyses: dict[str, Analysis]) -> None:
        """Analyses made earlier by an analyzer with the same tables (text -> analysis), e.g.
        from :class:`memcore.judge.analysis_cache.AnalysisCache`: not made again."""
        self._cache.update(analyses)

    def analyse_many(self, texts: Iterable[str]) -> list[Analysis]:
        """The analyses of ``texts``, in order; those not cached yet are made on every core
        (:func:`memcore.judge.parallel.split_map`: the same analyses, sooner)."""
        from memcore.judge.parallel import split_map

        texts = list(texts)
        self._collect(texts)
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            self.preload(dict(zip(todo, split_map(self._analyse_for_pairs, todo), strict=True)))
        return [self.analyse(t) for t in texts]

    def analyse_soon(self, texts: Iterable[str]) -> Callable[[], None]:
        """Start the analyses of ``texts`` not cached (nor started) yet in forked workers and
        return at once (:func:`memcore.judge.parallel.map_soon`); calling the function
        returned waits and caches them (those an earlier call started too). The caller
        meanwhile does work that needs no analysis."""
        from memcore.judge.parallel import map_soon

        texts = list(texts)
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache and t not in self._soon]
        if todo:
            results = map_soon(self._analyse_for_pairs, todo)
            done: list[bool] = []

            def collect() -> None:
                if not done:
                    done.append(True)
                    self.preload(dict(zip(todo, results(), strict=True)))
                for t in todo:
                    self._soon.pop(t, None)

            self._soon.update(dict.fromkeys(todo, collect))
        return lambda: self._collect(texts)

    def _collect(self, texts: Iterable[str]) -> None:
        """Wait for the analyses of ``texts`` that :meth:`analyse_soon` started (in the
        process that started them: a forked worker never waits for its parent's pool)."""
        if self._soon and os.getpid() == self._pid:
            for wait in {id(w): w for t in texts if (w := self._soon.get(t))}.values():
                wait()

    def analyse(self, text: str) -> Analysis:
        hit = self._cache.get(text)
        if hit is None:
            hit = self._analyse(text)
            if len(self._cache) > 200_000:
                self._cache.clear()
            self._cache[text] = hit
        return hit

    def _analyse_for_pairs(self, text: str) -> Analysis:
        """The analysis with the sets the pair comparison looks up already built (in a
        worker, they are built beside the candidate search, and once, instead of in every
        process that judges a share of the pairs)."""
        an = self._analyse(text)
        an.features  # noqa: B018  (cached on the analysis, and pickled with it)
        an.value_norms  # noqa: B018
        return an

    # the steps ----------------------------------------------------------------------------

    def _analyse(self, text: str) -> Analysis:
        lang = detect_lang(text)
        # what the entry says, without a leading "Decided:" / "Learned that": the same fact
        # kept as a decision and as a fact says the same thing
        toks = raw_tokens(_TYPE_LEAD_RE.sub("", text, count=1))  # (kind, surface)
        values: list[Value] = []
        names: set[str] = set()
        seq: list[str] = []  # lower-case words and value tokens, before aliases
        at_start = True
        possessors: set[str] = set()
        skip = -1
        for i, (kind, surf) in enumerate(toks):
            if i == skip:
                continue
            nxt = toks[i + 1][1].lower() if i + 1 < len(toks) else ""
            if kind == "punct":
                seq.append(surf)
                at_start = surf in _SENTENCE_END
                continue
            if kind in ("url", "email"):
                norm = surf.lower().rstrip("/")
                values.append(Value("url", norm, surf))
                seq.append(f"<url:{norm}>")
            elif kind == "code":
                inner = surf.strip("`").strip()
                norm = " ".join(inner.lower().split())
                if " " in norm:  # a command: one value
                    values.append(Value("code", norm, inner))
                    seq.append(f"<code:{norm}>")
                else:  # one path or identifier in backticks: the same value as without them
                    sub = self.analyse(inner)
                    values.extend(sub.values or (Value("code", norm, inner),))
                    seq.extend([f"<{v.kind}:{v.norm}>" for v in sub.values] or [f"<code:{norm}>"])
            elif kind == "time":
                norm = re.sub(r"\s+", "", surf).replace("–", "-")
                norm = re.sub(r"\b0(\d):", r"\1:", norm)
                values.append(Value("time", norm, surf))
                seq.append(f"<time:{norm}>")
            elif kind in ("path", "handle"):
                norm = surf.lower().rstrip(".,;")
                if kind == "path" and re.fullmatch(r"[^\W\d_]+/[^\W\d_]+", norm):
                    # "requests/min", "active/passive", "ci/cd": words, not a path
                    first, second = norm.split("/")
                    unit = UNITS.get(second)
                    seq.extend([first, "per_" + unit] if unit else [first, second])
                    at_start = False
                    continue
                raw = surf.rstrip(".,;")
                values.append(Value("path" if kind == "path" else "ident", norm, raw))
                seq.append(f"<{'path' if kind == 'path' else 'ident'}:{norm}>")
            elif kind == "money":
                norm = _num(re.sub(r"[^\d.,]", "", surf))
                values.append(Value("money", surf[0] + norm, surf, slot=surf[0]))
                seq.append(f"<money:{surf[0]}{norm}>")
            elif kind in ("version", "number"):
                m2 = re.match(r"(v?)([\d.,]*\d(?:\.x)?)(.*)", surf, re.IGNORECASE)
                assert m2 is not None
                digits, unit_raw = m2.group(2), m2.group(3).strip().lower()
                norm = digits.lower() if kind == "version" else _num(digits)
                if m2.group(1) and kind == "number":
                    norm = "v" + norm
                unit = UNITS.get(unit_raw, unit_raw)
                if kind == "version" and norm.startswith("v"):
                    norm = norm[1:]
                if not unit and nxt:
                    cjk_unit = _CJK_UNIT_RE.match(nxt)
                    unit = UNITS.get(nxt, "") or (
                        UNITS.get(cjk_unit.group(1), cjk_unit.group(1)) if cjk_unit else ""
                    )
                    if unit and not cjk_unit:
                        skip = i + 1  # the unit word is part of the value
                        surf = f"{surf} {toks[i + 1][1]}"
                prev = next(
                    (t for t in reversed(seq[-3:]) if t[:1].isalpha() and t not in STOP), ""
                )
                noun = re.fullmatch(r"[^\W\d_]+", nxt) and nxt not in _STOP_NOT_NOUNS
                if not unit and noun and prev not in _SLOT_WORDS:
                    unit = "#" + _canon_word(nxt)
                if not unit and prev:
                    unit = "@" + _canon_word(prev)
                if unit and unit[0] not in "#@":
                    norm = f"{norm}|{unit}"
                values.append(Value("num", norm, surf, slot=unit))
                seq.append(f"<num:{norm}>")
            elif kind == "ident" and surf.lower() not in _MIXED_CASE_WORDS:
                norm = surf.lower()
                values.append(Value("ident", norm, surf))
                seq.append(f"<ident:{norm}>")
            elif kind == "kebab":
                parts = surf.lower().split("-")
                if any(p in NUMBER_WORDS for p in parts) or self.aliases.starts_phrase(parts):
                    seq.extend(parts)  # "twenty-four", "time-series": words, not a name
                else:
                    values.append(Value("ident", surf.lower(), surf))
                    seq.append(f"<ident:{surf.lower()}>")
            elif kind == "ident":
                seq.append(surf.lower())
            elif kind == "cjk":
                seq.extend(surf[j : j + 2] for j in range(max(1, len(surf) - 1)))
            else:  # word
                low = surf.lower().replace("’", "'")
                base = low.removesuffix("'s") if low.endswith("'s") else low
                if low.endswith("'s") or (low.endswith("s'")):
                    possessors.add(base)
                acronym = len(surf) > 1 and surf.isupper()
                is_name = (
                    surf[0].isupper()
                    and base not in STOP
                    and (base not in OTHER_STOP or (acronym and lang != "de"))
                    and base not in NUMBER_WORDS
                    and (base,) not in self.aliases.phrases
                    and (not at_start or base in self.names or low.endswith("'s"))
                    and (lang != "de" or base in self.names or acronym)
                )
                if lang in ("zh", "ja") and surf.isascii():
                    is_name = base not in STOP and tuple([base]) not in self.aliases.phrases
                if is_name:
                    names.add(base)
                    values.append(Value("name", base, surf.removesuffix("'s").removesuffix("’s")))
                seq.append(base)
            at_start = False

        resolved = self.aliases.resolve([t for t in seq if t not in _SENTENCE_END])
        resolved = self._numbers_from_words(resolved, values)
        canon_words = " ".join(
            t[7:-1].replace("-", " ") if t.startswith("<ident:") else t for t in resolved
        ).split()
        qualifiers = qualifiers_of(canon_words)
        for p in possessors:
            if p in names:
                qualifiers.add(("owner", p))
        tokens: list[str] = []
        for t in resolved:
            if t.startswith("<"):
                tokens.append(t)
            elif t in STOP or t in OTHER_STOP:
                continue
            else:
                tokens.append(t if "_" in t else _canon_word(t))
        content = frozenset(t for t in tokens if t not in NEGATIONS)
        change = _change_words(text)
        low_text = _NOT_NEGATION_RE.sub(" ", text.lower())
        negated = (
            any(t in NEGATIONS or t.endswith("n't") for t in re.findall(r"[\w']+", low_text))
            or any(c in text for c in _CJK_NEG)
            or _CONTRAST_RE.search(low_text) is not None
        )
        # the subject: who or what the entry is about: its possessors and its first name
        lead = [t for t in resolved if t not in STOP and t not in OTHER_STOP][:2]
        heads = {p for p in possessors if p in names}
        lead_name = next((v.norm for v in values if v.kind == "name"), "")
        if lead_name and lead_name in lead:
            heads.add(lead_name)
        subject = frozenset(_canon_word(n) for n in heads)
        return Analysis(
            text=text,
            lang=lang,
            tokens=tuple(tokens),
            content=content,
            values=tuple(values),
            qualifiers=frozenset(qualifiers),
            subject=subject,
            names=frozenset(names),
            change=frozenset(change),
            negated=negated,
            change_objects=tuple(
                (m.group(1) or m.group(2) or m.group(3) or "").strip(" .,;:").lower()
                for m in _CHANGE_OBJECT_RE.finditer(text)
            )
            if _has_change_object_hint(text)
            else (),
        )

    @staticmethod
    def _numbers_from_words(seq: list[str], values: list[Value]) -> list[str]:
        """Counts written as words ("four pods", "twenty-four hours") become number tokens."""
        out: list[str] = []
        i = 0
        while i < len(seq):
            w = seq[i]
            n = NUMBER_WORDS.get(w)
            if w in ("every", "each", "per") and i + 1 < len(seq) and seq[i + 1] in _PERIODS:
                unit = UNITS[seq[i + 1]]
                values.append(Value("num", f"1|{unit}", f"{w} {seq[i + 1]}", slot=unit))
                out.extend([w, f"<num:1|{unit}>"])
                i += 2
                continue
            if n is None or (w in ONES and i + 1 < len(seq) and seq[i + 1] in STOP):
                out.append(w)
                i += 1
                continue
            j = i + 1
            if n >= 20 and j < len(seq) and NUMBER_WORDS.get(seq[j], 99) < 10:
                n += NUMBER_WORDS[seq[j]]
                j += 1
            nxt = seq[j] if j < len(seq) else ""
            if w in ONES and (not nxt or nxt.startswith("<") or nxt in _SENTENCE_END):
                out.append(w)
                i += 1
                continue
            unit = UNITS.get(nxt, "")
            norm = str(n)
            if unit:
                norm, j = f"{n}|{unit}", j + 1
            elif nxt and not nxt.startswith("<") and nxt not in STOP:
                unit = "#" + _canon_word(nxt)
            values.append(Value("num", norm, " ".join(seq[i:j]), slot=unit))
            out.append(f"<num:{norm}>")
            i = j
        return out


_DEFAULT = Analyzer()


def analyse(text: str) -> Analysis:
    """Analysis with the built-in tables only (no memory-defined aliases or names)."""
    return _DEFAULT.analyse(text)
