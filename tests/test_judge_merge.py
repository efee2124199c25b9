"""Host-side validation of proposals, and the offline lossless merged text."""

from __future__ import annotations

from memcore.judge.merge_text import choose_keeper, merge_text
from memcore.judge.protocol import EntryView, Judgement, Verdict
from memcore.judge.validate import APPLY, REJECT, REVIEW, check_merge, check_pair, missing_details


def e(
    i: str, text: str, scope: str = "project", pinned: bool = False, d: str = "2026-01-01"
) -> EntryView:
    return EntryView(i, text, scope=scope, created_at=d, pinned=pinned)


def test_missing_details_sees_numbers_names_paths_identifiers() -> None:
    src = "Kestrel's API listens on port 7400 behind Envoy; config in deploy/kestrel.yaml."
    assert missing_details([src], "Kestrel's API listens on port 7400.") == [
        "Envoy",
        "deploy/kestrel.yaml",
    ]
    assert missing_details([src], src) == []
    assert (
        missing_details(["Links expire after twenty-four hours."], "Links expire after 24 hours.")
        == []
    )


def test_check_merge_rules() -> None:
    a, b = e("a", "Kestrel listens on port 7400."), e("b", "Kestrel listens on 7400, behind Envoy.")
    assert check_merge([a, b], "Kestrel listens on port 7400, behind Envoy.", "a").action == APPLY
    lost = check_merge([a, b], "Kestrel listens on port 7400.", "a")
    assert lost.action == REVIEW and "Envoy" in lost.reason
    assert check_merge([a, e("g", a.text, scope="global")], a.text).action == REJECT
    pa = e("a", a.text, pinned=True)
    assert check_merge([pa, b], b.text, "b").action == REJECT  # would remove the pinned one
    assert check_merge([pa, b], "Kestrel listens on port 7400, behind Envoy.", "a").ok
    assert check_merge([pa, e("b", b.text, pinned=True)], b.text, "a").action == REVIEW


def test_check_pair_rules() -> None:
    old, new = (
        e("o", "CI runs on Jenkins.", pinned=True),
        e("n", "CI moved to Buildkite.", d="2026-02-01"),
    )
    sup = Judgement(Verdict.SUPERSEDES, "moved", 0.9, newer="n")
    assert check_pair(sup, old, new).action == REVIEW  # the pinned older entry stays
    assert check_pair(sup, e("o", old.text), new).action == APPLY
    assert check_pair(Judgement(Verdict.SUPERSEDES, "?", 0.9), old, new).action == REJECT
    cross = check_pair(sup, e("o", old.text, scope="global"), new)
    assert cross.action == REJECT and "scope" in cross.reason
    assert check_pair(Judgement(Verdict.CONFLICT, "x", 0.5), old, new).action == REVIEW
    assert check_pair(Judgement(Verdict.RELATED, "x", 0.5), old, new).ok
    assert check_pair(Judgement.skipped("timed out"), old, new).action == REJECT


def test_merge_text_weaves_in_only_what_is_missing() -> None:
    assert merge_text(
        "Kestrel listens on port 7400.", ["Kestrel listens on port 7400, behind Envoy."]
    ) == ("Kestrel listens on port 7400, behind Envoy.")
    assert merge_text(
        "Kestrel uses Meilisearch for search.", ["Kestrel uses Meilisearch 1.8 for search."]
    ) == ("Kestrel uses Meilisearch 1.8 for search.")
    # another language: the missing identifier as a parenthesis, never the foreign sentence
    out = merge_text(
        "Kestrel crash reports go to Sentry.",
        ["Kestrel 的崩溃报告会发送到 Sentry 项目 kestrel-mobile。"],
    )
    assert out == "Kestrel crash reports go to Sentry (kestrel-mobile)."
    # nothing missing: the keeper as it is
    assert (
        merge_text("Tests run with `make test`.", ["Run tests with `make test`."])
        == "Tests run with `make test`."
    )


def test_merge_text_never_glues_two_sentences() -> None:
    keeper = "Kestrel exports nightly."
    other = "At 02:15 UTC the Kestrel exporter writes to s3://kestrel-dumps using the batch role."
    out = merge_text(keeper, [other])
    assert out is None or (
        out.count("Kestrel") == 1 and "02:15" in out and "s3://kestrel-dumps" in out
    )


def test_choose_keeper() -> None:
    a, b = e("a", "Kestrel listens on 7400."), e("b", "Kestrel listens on 7400 behind Envoy.")
    assert choose_keeper([a, b]).id == "b"
    assert choose_keeper([e("a", a.text, pinned=True), b]).id == "a"


def test_choose_keeper_prefers_numbers_written_as_digits() -> None:
    words = EntryView(
        "w", "Brindle shards presence across twelve partitions.", created_at="2026-03-01"
    )
    digits = EntryView(
        "d", "Brindle shards presence across 12 partitions.", created_at="2026-01-01"
    )
    assert choose_keeper([words, digits]).id == "d"
    assert choose_keeper([digits, words]).id == "d"
