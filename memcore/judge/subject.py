"""Subject identity: whether two analysed entries are about the same project, service or person.

Values are compared only once the subjects match: "Orbit runs 3 replicas" and "Atlas runs
three replicas" share a sentence frame, but they are about two things, so neither restates,
replaces nor contradicts the other.

    subjects_differ(a, b)   # both name a subject, and neither names the other's
    names_disjoint(a, b)    # both name things, and they share none (across languages too)
    name_covered(v, other)  # a name of one entry also written in the other

Names are compared on their canonical stems (``Kofi's`` / ``Kofi``, ``Harbor`` /
``Harbor's``) or when one name is the other plus a suffix (``Timescale`` / ``TimescaleDB``);
two names that only share their first letters (``Terraform`` / ``Terragrunt``) differ.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memcore.judge.analysis import Analysis, Value, stem

_WORD_RE = re.compile(r"[^\W_]+")


def name_stems(an: Analysis) -> frozenset[str]:
    """The canonical stems of every name an entry carries (what its subject is compared to)."""
    return frozenset(stem(n) for n in an.names) | an.subject


def subjects_differ(a: Analysis, b: Analysis) -> bool:
    """Both entries name their subject, and neither subject is named anywhere in the other
    entry ("Orbit runs ..." / "Atlas runs ..."). A subject the other entry names as an owner
    or a value ("Aisha runs releases" / "Kofi took over releases from Aisha") is shared."""
    if not a.subject or not b.subject:
        return False
    return not (a.subject & name_stems(b)) and not (b.subject & name_stems(a))


def names_disjoint(a: Analysis, b: Analysis) -> bool:
    """Both entries name things (projects, people, products) and share none of them. Names
    survive translation, so two translations of one fact name the same things."""
    na, nb = name_stems(a), name_stems(b)
    return bool(na) and bool(nb) and not na & nb


@lru_cache(maxsize=65536)
def _words(text: str) -> frozenset[str]:
    return frozenset(w.casefold() for w in _WORD_RE.findall(text))


def name_covered(v: Value, other: Analysis) -> bool:
    """The name ``v`` (of one entry) is written in ``other``: the same stem, or one name is
    the other with a suffix of at most 3 letters (``Timescale`` / ``TimescaleDB``)."""
    target = stem(v.norm)
    if target in other.tokens or target in name_stems(other):
        return True
    word = v.norm.casefold()
    if len(word) < 4:
        return False
    for w in _words(other.text):
        short, long_ = sorted((word, w), key=len)
        if len(short) >= 4 and long_.startswith(short) and len(long_) - len(short) <= 3:
            return True
    return False
