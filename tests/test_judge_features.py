"""Per-entry comparison features: the same answers as the pairwise tests they replace."""

from __future__ import annotations

import itertools

from memcore.judge.analysis import Analyzer
from memcore.judge.features import close_to_any, prefixes, squash, squash_value


def _close(x: str, y: str) -> bool:
    """The judge's rule for one word in two forms, written out pair by pair."""
    if x == y:
        return True
    if x.startswith("<") or y.startswith("<") or min(len(x), len(y)) < 5:
        return False
    return x[:5] == y[:5]


def test_close_to_any_agrees_with_the_pairwise_rule() -> None:
    words = ["rotati", "rotate", "rot", "<num:5>", "<num:55555>", "deploy", "deplo", "dep", "x"]
    for size in range(0, 4):
        for group in itertools.combinations(words, size):
            exact = frozenset(group)
            near = prefixes(group)
            for w in [*words, "rotation", "<num:555556>", "deployment"]:
                assert close_to_any(w, exact, near) == any(_close(w, u) for u in group), (w, group)


def test_features_hold_what_the_comparison_looks_up() -> None:
    an = Analyzer().analyse("Kofi's staging API listens on port 9464 (see /etc/app.conf).")
    f = an.features
    assert an.features is f  # built once
    assert f.value_keys == {("num", "9464"), ("path", "/etc/app.conf"), ("name", "kofi")}
    assert f.token_set == frozenset(an.tokens)
    assert set(f.content_order) == set(an.content) and len(f.content_order) == len(an.content)
    assert f.qualifier_kinds["env"] == {"staging"}
    assert "/etc/app.conf" in f.squashed and "'" not in f.squashed
    assert squash("Port: 9,464!") == "port:9464"
    assert squash_value("24|h") == "24"
