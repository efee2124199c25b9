"""Value slots: which values of two entries fill one slot, and whether a swapped value is the
one thing that differs between them (the offline judge's value rules).

    value_conflicts(c)        # pairs of uncovered values, one per side, that fill one slot
    beyond_the_value(c, k)    # why swap k is not one attribute with two values ("" if it is)
    replaced_detail(c)        # a detail of one side standing where the other says otherwise
    points_at(v, objects, a)  # a change phrase of the newer entry names v as what changed

A slot is the unit ("30 seconds"; every duration is one slot, every data size another), the
noun a number counts ("4 pods") or the word before it ("port 9100", "Node 20"). ``c`` is a
:class:`memcore.judge.offline.Comparison`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from memcore.judge.aliases import words
from memcore.judge.analysis import STOP, Analysis, Value, stem

if TYPE_CHECKING:
    from memcore.judge.offline import Comparison


def moves_forward(va: Value, vb: Value) -> bool:
    """A value that a newer entry replaces without saying so: a version, a port, a host, a
    path, an identifier, an owner."""
    if va.kind in ("ident", "path", "url", "name", "code"):
        return True
    if va.kind == "num":
        return "." in va.norm or va.slot.startswith("@") or va.slot == ""
    return False


DIMENSIONS = {u: "duration" for u in ("ms", "s", "min", "h", "day", "week", "month", "year")}
DIMENSIONS |= {u: "size" for u in ("kb", "mb", "gb", "tb")}


def dim(v: Value) -> str:
    """What a unit measures: every duration is one slot, every data size another."""
    return DIMENSIONS.get(v.slot, v.slot)


def two_things(va: Value, vb: Value, c: Comparison) -> bool:
    """Each value follows another word ("Airflow 2.9" / "Composer 2") and both entries name
    both words: two things, each with its own value."""
    if va.kind != "num" or va.slot[:1] != "@" or vb.slot[:1] != "@" or va.slot == vb.slot:
        return False
    wa, wb = va.slot[1:], vb.slot[1:]
    return wa in c.b.tokens and wb in c.a.tokens


def value_conflicts(c: Comparison) -> list[tuple[Value, Value]]:
    """Pairs of uncovered values, one per side, that can fill one slot."""
    out = []
    for va in c.vals_a:
        for vb in c.vals_b:
            kinds = {va.kind, vb.kind}
            if va.kind != vb.kind and kinds not in ({"name", "ident"}, {"name", "code"}):
                continue
            unit_a = va.slot[:1] not in ("@", "#", "")
            unit_b = vb.slot[:1] not in ("@", "#", "")
            if va.kind == "num" and (unit_a != unit_b or (unit_a and dim(va) != dim(vb))):
                continue  # "30 seconds" and "port 443" are no one slot ("8 hours" / "2 days" are)
            if two_things(va, vb, c):
                continue  # "Airflow 2.9 on Composer" / "Airflow on Composer 2"
            counted = (va.slot[:1] == "#") + (vb.slot[:1] == "#")
            if va.kind == "num" and counted and va.slot[1:] != vb.slot[1:]:
                continue  # "3 brokers" and "client 3.7" (or "4 pods" / "6 nodes") are two slots
            out.append((va, vb))
    return out


def values_only(swap: tuple[list[str], list[str]], conflicts: list[tuple[Value, Value]]) -> bool:
    """A swap that only replaces values with values of the same slot ("Elixir 1.15 on OTP 26"
    / "Elixir 1.17 on OTP 27": two values moved, no qualifier)."""
    pairs = {(token(va), token(vb)) for va, vb in conflicts}
    ra, rb = swap
    return len(ra) == len(rb) and all((x, y) in pairs for x, y in zip(ra, rb, strict=True))


def one_sided_qualifiers(c: Comparison) -> list[str]:
    """Qualifiers only one side names ("In staging, X sends mail to Mailpit" / "X
    sends mail via Postmark"): the qualified entry may be a special case of the other."""
    ka = {k for k, _ in c.a.qualifiers}
    kb = {k for k, _ in c.b.qualifiers}
    return sorted(f"{k}:{v}" for k, v in c.a.qualifiers | c.b.qualifiers if k in ka ^ kb)


def beyond_the_value(c: Comparison, k: int) -> str:
    """Why a swapped value in swap ``k`` is not one attribute with two values (empty when it
    is): a second value swapped with it (an attribute and its value: "targetSdk is 34" /
    "applicationId is fit.app"), a qualifier on one side only, or several other words that
    differ ("the production Looker points at ..." / "the BigQuery dataset for marts is ...")."""
    ra, rb = c.swaps[k]
    if sum(t.startswith("<") for t in ra) > 1 and sum(t.startswith("<") for t in rb) > 1:
        return "an attribute and its value both differ"
    one_sided = one_sided_qualifiers(c)
    if one_sided:
        return f"only one side is qualified ({one_sided[0]})"
    value_toks = {token(v) for v in c.vals_a + c.vals_b}
    changed = {stem(w) for m in c.change for w in m.split()}  # "moved", "since the bump"
    rest = [
        t
        for t in c.only_a + c.only_b
        if not t.startswith("<") and t not in value_toks and t not in VERBISH | changed
    ]
    if len(rest) > 1:
        return f"more than the value differs ({', '.join(sorted(rest)[:4])})"
    return ""


def points_at(v: Value, objects: Sequence[str], older: Analysis) -> bool:
    """A change phrase of the newer entry names ``v`` (an old value of ``older``) as what
    changed, and the older entry says all of that phrase: "moved off Firebase Functions" points
    at "runs on Firebase Functions", not at "the Firebase project is kestrel-prod"."""
    raw = v.raw.lower().split()
    for o in objects:
        ws = o.split()
        at = next((i for i in range(len(ws)) if ws[i : i + len(raw)] == raw), None)
        if at is None:
            continue
        after = [w for w in ws[at + len(raw) : at + len(raw) + 1] if content(w)]
        if all(said(w, older) for w in after):
            return True
    return False


def content(word: str) -> bool:
    return word not in STOP and (len(word) > 2 or any(ch.isdigit() for ch in word))


def said(word: str, older: Analysis) -> bool:
    """``older`` writes ``word`` (a word of a change phrase of the newer entry)."""
    return word in said_words(older.text) or stem(word) in older.tokens


@lru_cache(maxsize=65536)
def said_words(text: str) -> frozenset[str]:
    return frozenset(w.casefold().strip(".:") for w in re.findall(r"[\w@#./:+-]+", text))


def replaced_detail(c: Comparison) -> tuple[str, str] | None:
    """A detail of one side stands where the other side says something else ("as ISO 8601
    strings" / "in epoch milliseconds"): a replaced value, not an added detail."""
    value_toks = {token(v) for v in c.vals_a + c.vals_b}
    for ra, rb in c.swaps:
        va = [t for t in ra if t in value_toks]
        vb = [t for t in rb if t in value_toks]
        wa = [t for t in ra if t not in value_toks and not t.startswith("<")]
        wb = [t for t in rb if t not in value_toks and not t.startswith("<")]
        if (va and not vb and wb) or (vb and not va and wa):
            return " ".join(ra), " ".join(rb)
    return None


def token(v: Value) -> str:
    return stem(v.norm) if v.kind == "name" else f"<{v.kind}:{v.norm}>"


def swap_of(c: Comparison, va: Value, vb: Value) -> int | None:
    ka, kb = token(va), token(vb)
    for k, (ra, rb) in enumerate(c.swaps):
        if ka in ra and kb in rb:
            return k
    return None


VERBISH = frozenset(
    stem(w)
    for w in words(
        """need include give assign chose choose built build come create run running publish
    name named follow go goes handle use keep store make set put take get send reach ping live
    sit host call hit pull push sync show write read own maintain review approve block trigger
    start stop depend require say tell mean work allow let support cover hold contain provide
    offer return accept expect prefer want like avoid place put happen depend sign power serve
    lives located found sits is"""
    )
)
