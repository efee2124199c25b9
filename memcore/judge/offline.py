"""The offline judge: two analyses in, one verdict with a reason and a confidence out.

    judge = OfflineJudge(embedder=None, analyzer=Analyzer.for_texts(all_texts))
    judge.judge([(older_view, newer_view), ...]) -> [Judgement, ...]

How a pair is decided (A = the older entry, B = the newer; same date: file order):

1. Different languages: compared by what survives translation (numbers with units, names,
   identifiers, paths) plus the embedder's similarity. With a multilingual embedder the
   similarity carries most of it; with the English-only or hashing embedder a translation
   is found only when it shares specific details.
2. A qualifier that separates the two (staging vs production, API vs worker, default vs
   maximum, weekdays vs weekends, iOS vs Android, Kofi's vs Aisha's, ...) -> ``related``:
   both can be true, so never ``conflict``. Weak kinds (language, file format, protocol,
   owner) separate only when something else differs too ("YAML with 2 spaces" / "Python
   with 4 spaces"); alone they are the swapped value ("written in Go" / "written in Rust").
3. B carries change wording A lacks ("moved from X to Y", "now", "no longer", "replaced",
   "switched", "instead", "deprecated", ...) and talks about A's subject -> ``supersedes``.
4. One value swapped in an otherwise shared statement (port 9100 / 9464, "four pods" /
   "6 pods", Helm / Kustomize, single / double quotes) -> ``supersedes`` when B is newer
   and the value naturally moves forward (a version, a port, a host, a path, an owner),
   else ``conflict``.
5. Otherwise the overlap of what both say (aliases resolved, counts in words as numbers,
   synonyms, plus the embedder's similarity) decides between ``same`` (one side may add a
   detail), ``related`` (same subject, different facts) and ``unrelated``.

Thresholds are per embedder id (tuned on the tuning split of bench/eval/judge); an unknown
embedder gets the defaults. The judge is deterministic; its id includes its version and the
embedder's id so the verdict cache never mixes configurations.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import cached_property

import numpy as np

from memcore.judge import slots
from memcore.judge.aliases import words, wordset
from memcore.judge.analysis import WEAK_KINDS, Analysis, Analyzer, Value, stem
from memcore.judge.analysis import canon_word as _canon_stem
from memcore.judge.features import squash_value
from memcore.judge.parallel import split_map
from memcore.judge.protocol import Embeds, EntryView, Judgement, Pair, Verdict
from memcore.judge.subject import name_covered, name_stems, names_disjoint, subjects_differ

VERSION = "offline-3"


@dataclass(frozen=True)
class Thresholds:
    """Similarity cut-offs of one embedder (``sim`` is the cosine of the two texts)."""

    same_overlap: float = 0.5  # token overlap that alone makes a restatement
    same_sim: float = 0.75  # cosine that, with some overlap, makes a restatement
    cross_sim: float = 0.8  # cosine that makes a translation without shared details


THRESHOLDS: dict[str, Thresholds] = {
    "none": Thresholds(),
    "hashing-v1-4096": Thresholds(same_sim=0.6, cross_sim=2.0),
    "minilm-l6-int8": Thresholds(same_sim=0.75, cross_sim=2.0),
    # multilingual: a translation scores 0.7-0.97 with its original, other entries in
    # another language below 0.7 (bench/eval/judge, both splits)
    "use-m3-512": Thresholds(same_sim=0.75, cross_sim=0.72),
}


@dataclass
class Comparison:
    """What two analyses share and where they differ (the judge's evidence)."""

    a: Analysis
    b: Analysis
    given_sim: float | Callable[[], float | None] | None  # the cosine, or how to get it
    shared: set[str] = field(default_factory=set)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    vals_a: list[Value] = field(default_factory=list)  # values of A that B lacks
    vals_b: list[Value] = field(default_factory=list)
    shared_vals: int = 0
    separating: list[tuple[str, str, str]] = field(default_factory=list)
    change: set[str] = field(default_factory=set)  # change markers in B, not in A
    named_old: list[str] = field(default_factory=list)  # A's values B names (the old value)
    named_old_values: list[Value] = field(default_factory=list)

    @cached_property
    def sim(self) -> float | None:
        """The cosine of the two texts (None: no embedder). Taken on first use when given
        as a function: most verdicts are reached without it."""
        s = self.given_sim
        return s() if callable(s) else s

    @cached_property
    def swaps(self) -> list[tuple[list[str], list[str]]]:
        """The replaced stretches of the two token sequences that hold a leftover token on
        both sides (a swapped value or word), in order. Computed on first use: the word
        alignment is the costliest part of a comparison, and most verdicts never need it."""
        out: list[tuple[list[str], list[str]]] = []
        if not (self.only_a and self.only_b):  # a swap needs a leftover token on both sides
            return out
        residual_a, residual_b = set(self.only_a), set(self.only_b)
        a, b = self.a.tokens, self.b.tokens
        sm = SequenceMatcher(None, a, b, autojunk=False)
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            if tag == "equal":
                continue
            ra = [t for t in a[i1:i2] if t in residual_a]
            rb = [t for t in b[j1:j2] if t in residual_b]
            if ra and rb:
                out.append((ra, rb))
        return out

    @property
    def overlap(self) -> float:
        """Shared tokens over the smaller side (containment), in [0, 1]."""
        na, nb = len(self.shared) + len(self.only_a), len(self.shared) + len(self.only_b)
        return len(self.shared) / max(1, min(na, nb))

    @property
    def jaccard(self) -> float:
        return len(self.shared) / max(1, len(self.shared) + len(self.only_a) + len(self.only_b))


def _covered(v: Value, other: Analysis) -> bool:
    f = other.features
    if (v.kind, v.norm) in f.value_keys:
        return True
    if v.kind == "num":
        return False  # "6" inside "16" says nothing
    sq = squash_value(v.norm)
    if len(sq) >= 2 and sq in f.squashed:
        return True
    return v.kind == "name" and name_covered(v, other)


def compare(
    a: Analysis, b: Analysis, sim: float | Callable[[], float | None] | None = None
) -> Comparison:
    """The comparison of an older entry ``a`` with a newer entry ``b`` (the per-entry sets
    it looks things up in are built once per entry: :mod:`memcore.judge.features`; ``sim``
    may be a function that gives the cosine when it is needed)."""
    c = Comparison(a, b, sim)
    fa, fb = a.features, b.features
    cov_a = [_covered(v, b) for v in a.values]
    cov_b = [_covered(v, a) for v in b.values]
    c.vals_a = [v for v, cov in zip(a.values, cov_a, strict=True) if not cov]
    c.vals_b = [v for v, cov in zip(b.values, cov_b, strict=True) if not cov]
    c.shared_vals = len(a.values) - len(c.vals_a)
    covered_tokens = {t for t, cov in zip(fa.value_tokens, cov_a, strict=True) if cov}
    covered_tokens |= {t for t, cov in zip(fb.value_tokens, cov_b, strict=True) if cov}
    # close_to_any, inlined, with each token's prefix made once per entry (content_keys)
    shared, only_a = c.shared, c.only_a
    tb, near_b = fb.content_set, fb.content_prefixes
    for t, key in fa.content_keys:
        if t in covered_tokens or t in tb or (key is not None and key in near_b):
            shared.add(t)
        else:
            only_a.append(t)
    ta, near_a = fa.content_set, fa.content_prefixes
    c.only_b = [
        t
        for t, key in fb.content_keys
        if t not in shared
        and t not in covered_tokens
        and t not in ta
        and (key is None or key not in near_a)
    ]
    qa, qb = fa.qualifier_kinds, fb.qualifier_kinds
    if qa and qb:
        for k in qa.keys() & qb.keys():
            if not qa[k] & qb[k]:
                c.separating.append((k, "/".join(sorted(qa[k])), "/".join(sorted(qb[k]))))
    c.change = set(b.change - a.change)
    if c.change:
        subjects = a.subject | b.subject
        c.named_old_values = [
            v
            for v, cov in zip(a.values, cov_a, strict=True)
            if cov
            and (v.kind != "num" or v.raw.lower().startswith("v") or "." in v.norm)
            and stem(v.norm) not in subjects
        ]
        c.named_old = [v.raw for v in c.named_old_values]
    return c


_GENERIC = wordset("user team project servic app thing")
_GENERIC_VERBISH = _GENERIC | slots.VERBISH
_SLOT_STEMS = frozenset(stem(w) for w in words("port version level host path"))
# change markers that need the old value named (or a swapped value) to count
_WEAK_CHANGE = frozenset(
    [
        "dropped",
        "again",
        "this year",
        "gone",
        "removed",
        "stopped",
        "frozen",
        "changed",
        "instead",
        "adopted",
        "lifted",
        "cancelled",
        "canceled",
        "any more",
        "anymore",
    ]
)


_UNNAMED = " (only one side names what it is about)"
_TWO_NAMES = " (two names: they may name two things)"


_POSSESSED_RE = re.compile(r"\b[\w-]+['’]s\s+(?:\d[\w.]*\s+)?([^\W\d_][\w-]*)")


def _possessed(an: Analysis) -> str:
    """The stem of the first thing an entry's owner has ("Dovetail's 2023 postmortems":
    postmortem), or ""."""
    m = _POSSESSED_RE.search(an.text)
    return _canon_stem(m.group(1)) if m else ""


def _other_things(a: Analysis, b: Analysis, named: set[str]) -> bool:
    """Both entries say what of their owner they are about, two different things, and
    neither names the other's ("Dovetail's runbooks moved from Confluence" says nothing of
    "Dovetail's 2023 postmortems are archived in Confluence")."""
    del named
    pa, pb = _possessed(a), _possessed(b)
    return bool(pa) and bool(pb) and pa != pb and pa not in b.tokens and pb not in a.tokens


def _timing(v: Value) -> bool:
    """A value that says when or how often: a duration, a time of day, a weekday."""
    if v.kind == "time":
        return True
    if v.kind == "num":
        return slots.dim(v) == "duration"
    return v.kind == "name" and stem(v.norm) in _WEEKDAYS


_WEEKDAYS = frozenset(
    stem(w) for w in words("monday tuesday wednesday thursday friday saturday sunday")
)


def decide(c: Comparison, th: Thresholds, newer_by_date: bool) -> tuple[Verdict, str, float, bool]:
    """The verdict of one comparison: (verdict, reason, confidence, newer-is-known)."""
    a, b = c.a, c.b
    if subjects_differ(a, b):
        who = f"{'/'.join(sorted(a.subject))} vs {'/'.join(sorted(b.subject))}"
        return Verdict.UNRELATED, f"different subjects ({who}): values not compared", 0.8, False
    if a.lang != b.lang and "other" not in (a.lang, b.lang):
        return _cross_language(c, th)
    shared_subject = bool(a.subject & b.subject)
    topical = shared_subject or c.overlap >= 0.4
    frame = [t for t in c.shared if not t.startswith("<")]
    framed = len(frame) >= 2 and c.jaccard >= 0.3

    def short_swaps() -> list[tuple[list[str], list[str]]]:
        return [s for s in c.swaps if max(len(s[0]), len(s[1])) <= 3]

    # 1. a qualifier that makes both true
    if c.separating:
        strong = [s for s in c.separating if s[0] not in WEAK_KINDS]
        if strong or (c.vals_a and c.vals_b) or len(c.swaps) > 1:
            kind, qa, qb = (strong or c.separating)[0]
            v = Verdict.RELATED if topical or framed else Verdict.UNRELATED
            return v, f"{kind} qualifier separates them: {qa} vs {qb}", 0.8, False
    conflicts = slots.value_conflicts(c)

    def aligned() -> list[tuple[Value, Value, int]]:  # value conflicts that are one swap
        if not conflicts:
            return []  # (and no word alignment needed)
        return [
            (va, vb, at) for va, vb in conflicts if (at := slots.swap_of(c, va, vb)) is not None
        ]

    # 2. change wording in the newer entry
    strong_change = c.change - _WEAK_CHANGE
    # the newer entry talks about the same attribute, not just the same project or person
    named = {stem(v.norm) for v in c.named_old_values}
    attr_other = [  # (no union of the five sets per pair: most pairs test a word or two)
        t
        for t in frame
        if t not in _GENERIC_VERBISH
        and t not in a.subject
        and t not in b.subject
        and t not in named
    ]
    distinctive = any(
        v.kind in ("ident", "path", "url", "code", "time") for v in c.named_old_values
    )
    pointed = [v for v in c.named_old_values if slots.points_at(v, b.change_objects, a)]
    if pointed and not attr_other and _other_things(a, b, named):
        pointed = []  # "runbooks moved from Confluence" says nothing of "postmortems in it"
    same_attribute = (
        len(attr_other) >= 2
        or bool(pointed)
        or (bool(named) and (bool(attr_other) or distinctive or bool(conflicts)))
        or (bool(conflicts) and any(t not in _SLOT_STEMS for t in attr_other))
    )
    # "moved from cron-01 to ...": the newer entry names an old value the older one never said
    objects = [w for o in b.change_objects for w in o.split() if slots.content(w)]
    elsewhere = bool(objects) and not any(slots.said(w, a) for w in objects)
    if c.change and topical and same_attribute and not elsewhere:
        why = ", ".join(sorted(c.change))
        if pointed and (strong_change or conflicts or c.vals_b):
            return (
                Verdict.SUPERSEDES,
                f"newer entry says '{why}' and names the old value {pointed[0].raw}",
                0.85,
                True,
            )
        clean = (
            [(va, vb, k) for va, vb, k in aligned() if not slots.beyond_the_value(c, k)]
            if c.named_old and (strong_change or c.vals_b)
            else []
        )
        if clean:
            va, vb, _k = clean[0]
            return (
                Verdict.SUPERSEDES,
                f"newer entry says '{why}': {vb.raw} in place of {va.raw}",
                0.75,
                True,
            )
        if (strong_change or a.negated != b.negated) and (
            c.vals_b or c.only_b or a.negated != b.negated  # a swap has an only_b token
        ):
            why = f"newer entry says '{why}' about the same subject (no old value named)"
            return Verdict.SUPERSEDES, why, 0.6, True
        if conflicts and framed:
            return Verdict.SUPERSEDES, f"newer entry says '{why}' with a new value", 0.65, True
    # 3. one value swapped in a shared statement
    one_swap = aligned() if framed else []
    if one_swap:
        va, vb, k = one_swap[0]
        others = [
            s
            for s in short_swaps()
            if c.swaps.index(s) != k and not slots.values_only(s, conflicts)
        ]
        value_toks = {slots.token(v) for v in c.vals_a + c.vals_b}
        wa = [t for t in c.swaps[k][0] if not t.startswith("<") and t not in value_toks]
        wb = [t for t in c.swaps[k][1] if not t.startswith("<") and t not in value_toks]
        if wa and wb and not (c.change and len(wa) + len(wb) <= 2):
            others = [(wa, wb), *others]
        if others:
            ra, rb = others[0]
            return (
                Verdict.RELATED,
                f"two things differ ({' '.join(ra)} / {' '.join(rb)}; {va.raw} / {vb.raw}):"
                " a qualifier, not a contradiction",
                0.6,
                False,
            )
        beyond = slots.beyond_the_value(c, k)
        if beyond:
            return (
                Verdict.RELATED,
                f"{va.raw} / {vb.raw}, but {beyond}: not one attribute with two values",
                0.6,
                False,
            )
        # the subject named on one side only: the values may belong to two things
        swapped = {stem(va.norm), stem(vb.norm)}
        one_named = (name_stems(a) - swapped) ^ (name_stems(b) - swapped)
        sure, why = (0.6, _UNNAMED) if one_named else (0.7, "")
        if not one_named and va.kind == "name" and vb.kind == "name":
            # "runs NixOS" / "runs containers with Podman", "rev B" / "rev C": two names in
            # one place may be two things (an OS and a tool, two boards), not a replacement
            sure, why = 0.65, _TWO_NAMES
        if newer_by_date and slots.moves_forward(va, vb):
            return Verdict.SUPERSEDES, f"newer value {vb.raw} replaces {va.raw}{why}", sure, True
        return Verdict.CONFLICT, f"differing values: {va.raw} vs {vb.raw}{why}", sure, newer_by_date
    if (
        c.jaccard >= 0.4
        and len(frame) >= 3
        and len(c.swaps) == 1
        and max(len(c.swaps[0][0]), len(c.swaps[0][1])) <= 3
    ):
        sa, sb = c.swaps[0]
        verbish = any(stem(t) in slots.VERBISH or t in slots.VERBISH for t in sa + sb)
        if not verbish and (len(c.vals_a) + len(c.vals_b) <= 1 or conflicts):
            return (
                Verdict.CONFLICT,
                f"differing values: {' '.join(sa)} vs {' '.join(sb)}",
                0.6,
                newer_by_date,
            )
    if a.negated != b.negated and len(c.only_a) + len(c.only_b) <= 1 and framed:
        return Verdict.CONFLICT, "negation on one side of the same statement", 0.6, newer_by_date
    if framed and c.jaccard >= 0.4 and len(short_swaps()) >= 2:
        return Verdict.RELATED, "two slots differ: a qualifier and a value", 0.5, False
    if conflicts:
        va, vb = conflicts[0]
        v = Verdict.RELATED if topical else Verdict.UNRELATED
        return v, f"different values: {va.raw} vs {vb.raw}", 0.5, False
    # 4. restatement, different facts, or different subjects
    sim = c.sim if c.sim is not None else 0.0
    one_sided = not c.only_a or not c.only_b
    if one_sided:
        same = c.overlap >= 0.75 and len(c.shared) >= 2
    elif c.vals_a and c.vals_b:  # each side names something the other lacks
        same = c.jaccard >= th.same_overlap
    else:
        bounded = max(len(c.only_a), len(c.only_b)) <= len(c.shared) or sim >= th.same_sim + 0.1
        same = c.jaccard >= th.same_overlap or (
            c.jaccard >= 0.25 and sim >= th.same_sim and bounded
        )
        lone = [v for v in c.vals_a + c.vals_b if v.kind in ("ident", "path", "url", "code")]
        if same and lone and c.jaccard < th.same_overlap + 0.1 and sim < th.same_sim:
            same = False  # "the UI is at registry.x" / "MLEs own the registry": two facts
    if same and a.names and b.names and not a.subject & b.subject and not c.shared_vals:
        same = False  # two named subjects with nothing named in common
    replaced = slots.replaced_detail(c) if same else None
    if same and not replaced:
        ta = [v for v in c.vals_a if _timing(v)]
        tb = [v for v in c.vals_b if _timing(v)]
        if ta and tb:  # "on Mondays" / "two weeks after beta": two schedules
            replaced = (ta[0].raw, tb[0].raw)
    if replaced:
        return (
            Verdict.RELATED,
            f"one side has {replaced[0]} where the other has {replaced[1]}",
            0.5,
            False,
        )
    if same:
        conf = min(0.95, 0.45 + 0.5 * c.jaccard + (0.1 if sim >= th.same_sim else 0.0))
        extra = [v.raw for v in c.vals_a + c.vals_b]
        reason = "one statement" + (f"; one side adds {', '.join(extra[:3])}" if extra else "")
        return Verdict.SAME, reason, conf, False
    if topical:
        return Verdict.RELATED, "same subject, different facts", 0.5, False
    return Verdict.UNRELATED, "different subjects", 0.6, False


def _bare(kind: str, norm: str) -> bool:
    return kind == "num" and "|" not in norm and "." not in norm


def _same_names_and_numbers(c: Comparison) -> bool:
    """Two entries in two languages name the same things and write the same numbers, and
    nothing else specific sets them apart (hyphenated words are language, not details):
    "Fjord limits attachments to 25 files" / "Fjord では ... 25 個までに制限". Names alone count
    only when there are three or more of them."""

    def kinds(an: Analysis, kind: str) -> set[str]:
        return {v.norm.split("|")[0] for v in an.values if v.kind == kind}

    if any(v.kind not in ("name", "num") and "-" not in v.norm for v in c.vals_a + c.vals_b):
        return False
    names_a, names_b = name_stems(c.a), name_stems(c.b)
    nums_a, nums_b = kinds(c.a, "num"), kinds(c.b, "num")
    if not names_a or names_a != names_b or nums_a != nums_b:
        return False
    return bool(nums_a) or len(names_a) >= 3


def _cross_language(c: Comparison, th: Thresholds) -> tuple[Verdict, str, float, bool]:
    strong_a = [v for v in c.vals_a if v.kind != "name"]
    strong_b = [v for v in c.vals_b if v.kind != "name"]
    sim = c.sim if c.sim is not None else 0.0
    langs = f"{c.a.lang}/{c.b.lang}"
    if slots.value_conflicts(c) and strong_a and strong_b:
        return Verdict.RELATED, f"{langs}: differing values", 0.4, False
    if names_disjoint(c.a, c.b):
        return Verdict.UNRELATED, f"{langs}: they name different things", 0.5, False
    a_vals = {(v.kind, v.norm) for v in c.a.values} - {(v.kind, v.norm) for v in c.vals_a}
    # a bare number ("4000": a port here, an amount there) ties no two languages together
    shared_specific = sum(k != "name" and not _bare(k, n) for k, n in a_vals)
    clean = not strong_a and not strong_b
    # names alone ("Amara", "Marigold") say who, not what: a specific detail must match too
    enough = (shared_specific >= 1 and clean) or _same_names_and_numbers(c)
    multilingual = th.cross_sim <= 1.0 and c.sim is not None
    if multilingual and sim < th.cross_sim - 0.12:
        enough = False  # the multilingual embedder sees two different statements
    if (enough or sim >= th.cross_sim) and c.change:
        # "préfère désormais ... en français" after "wants ... in English": a change, not a
        # restatement (uncertain across languages: the review item suggests keeping both)
        why = ", ".join(sorted(c.change))
        return Verdict.SUPERSEDES, f"{langs}: the newer entry says '{why}'", 0.55, True
    if enough or sim >= th.cross_sim:
        return Verdict.SAME, f"{langs}: the same details in two languages", 0.6, False
    if c.shared_vals:
        return Verdict.RELATED, f"{langs}: some shared details", 0.3, False
    return Verdict.UNRELATED, f"{langs}: nothing shared", 0.3, False


class OfflineJudge:
    """The default judge: no model, no network; deterministic. ``embedder`` (optional) adds
    the cosine of the two texts as a signal; ``analyzer`` should be built from the whole
    memory (:meth:`Analyzer.for_texts`) so aliases and names the memory defines are known."""

    def __init__(
        self,
        embedder: Embeds | None = None,
        analyzer: Analyzer | None = None,
        thresholds: Thresholds | None = None,
    ) -> None:
        self.embedder = embedder
        self.analyzer = analyzer or Analyzer()
        eid = embedder.id if embedder is not None else "none"
        self.thresholds = thresholds or THRESHOLDS.get(eid, Thresholds())
        self.judge_id = f"{VERSION}+{eid}"
        self._known: dict[str, np.ndarray] = {}

    def remember(self, texts: Sequence[str], vecs: np.ndarray) -> None:
        """Vectors the caller already has (from the vector cache), so judging embeds nothing
        twice. Rows must come from this judge's embedder."""
        for t, v in zip(texts, np.asarray(vecs, dtype=np.float32), strict=True):
            self._known[t] = v

    def _embed_missing(self, pairs: Sequence[Pair]) -> None:
        """Embed, in one batch, the texts of ``pairs`` this judge has no vector of."""
        known = self._known
        todo = list(dict.fromkeys(t for a, b in pairs for t in (a.text, b.text) if t not in known))
        if todo and self.embedder is not None:
            fresh = np.asarray(self.embedder.embed(todo), dtype=np.float32)
            known.update(zip(todo, fresh, strict=True))

    def _sim(self, a: EntryView, b: EntryView) -> float:
        known = self._known
        return float(known[a.text] @ known[b.text])

    def judge(self, pairs: Sequence[Pair]) -> list[Judgement]:
        """One judgement per pair, in order (the texts are embedded once, in one batch, and
        a pair's cosine is taken only when its verdict needs it; many pairs are judged on
        every core: :func:`memcore.judge.parallel.split_map`)."""
        if self.embedder is not None:
            self._embed_missing(pairs)
        return split_map(self._judge_pair, list(pairs))

    def _judge_pair(self, pair: Pair) -> Judgement:
        a, b = pair
        if self.embedder is None:
            return self.judge_one(a, b)
        return self.judge_one(a, b, lambda: self._sim(a, b))

    def judge_one(
        self,
        x: EntryView,
        y: EntryView,
        sim: float | Callable[[], float | None] | None = None,
    ) -> Judgement:
        """The judgement of one pair (either order; the older entry is found by date).
        ``sim``: the cosine of the two texts, or a function that gives it."""
        if x.scope != y.scope:
            return Judgement(Verdict.UNRELATED, "different scopes: never merged", 1.0)
        dx, dy = x.created_at[:10], y.created_at[:10]
        older, newer = (x, y) if dx <= dy else (y, x)
        a, b = self.analyzer.analyse(older.text), self.analyzer.analyse(newer.text)
        if dx == dy and (a.change - b.change) and not (b.change - a.change):
            older, newer, a, b = newer, older, b, a  # one date: the one that says "now" is newer
        if (
            a.lang == b.lang
            and a.content.isdisjoint(b.content)
            and a.value_norms.isdisjoint(b.value_norms)
        ):
            return Judgement(Verdict.UNRELATED, "nothing in common", 0.7)
        c = compare(a, b, sim)
        verdict, reason, conf, dated = decide(c, self.thresholds, dx != dy)
        known = verdict is Verdict.SUPERSEDES or (verdict is Verdict.CONFLICT and dated)
        return Judgement(verdict, reason, round(conf, 3), newer.id if known else None)
