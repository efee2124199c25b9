"""The offline judge on hand-written pairs (not the labelled set: that one is for bench/)."""

from __future__ import annotations

import pytest

from memcore.judge.analysis import Analyzer
from memcore.judge.offline import OfflineJudge
from memcore.judge.protocol import EntryView, Judge, Verdict
from memcore.search.embeddings.hashing import HashingEmbedder

PAIRS: list[tuple[str, str, str, str, str]] = [
    # (older, newer, older date, newer date, expected)
    (
        "Kestrel's staging runs Node 20.",
        "Kestrel's production runs Node 18.",
        "2026-01-02",
        "2026-01-02",
        "related",
    ),
    (
        "The Kestrel API logs at WARN.",
        "The Kestrel worker logs at TRACE.",
        "2026-01-02",
        "2026-01-02",
        "related",
    ),
    (
        "Kestrel's default batch size is 50.",
        "Kestrel's maximum batch size is 500.",
        "2026-01-02",
        "2026-03-02",
        "related",
    ),
    (
        "Kestrel builds run on Jenkins.",
        "Kestrel builds moved from Jenkins to Buildkite.",
        "2026-01-02",
        "2026-03-02",
        "supersedes",
    ),
    (
        "Kestrel exports to S3.",
        "Kestrel no longer exports to S3; it writes to GCS now.",
        "2026-01-02",
        "2026-03-02",
        "supersedes",
    ),
    (
        "The Kestrel gateway listens on port 7100.",
        "The Kestrel gateway listens on port 7200.",
        "2026-01-02",
        "2026-04-02",
        "supersedes",
    ),
    (
        "The Kestrel gateway timeout is 20 seconds.",
        "The Kestrel gateway timeout is 45 seconds.",
        "2026-01-02",
        "2026-01-02",
        "conflict",
    ),
    (
        "Kestrel keeps four replicas.",
        "Kestrel keeps 7 replicas.",
        "2026-01-02",
        "2026-01-02",
        "conflict",
    ),
    (
        "Kestrel keeps four replicas.",
        "Kestrel keeps 4 replicas.",
        "2026-01-02",
        "2026-02-02",
        "same",
    ),
    (
        "The Kestrel k8s cluster has 5 node pools.",
        "Kestrel's Kubernetes cluster has 5 node pools.",
        "2026-01-02",
        "2026-02-02",
        "same",
    ),
    (
        "Kestrel's cache lives in Redis.",
        "Kestrel's cache lives in Redis 7.2, on port 6380.",
        "2026-01-02",
        "2026-02-02",
        "same",
    ),
    (
        "Kestrel's nightly export starts at 02:15 UTC.",
        "L'export nocturne de Kestrel démarre à 02:15 UTC.",
        "2026-01-02",
        "2026-02-02",
        "same",
    ),
    (
        "Kestrel sprints last two weeks.",
        "Fjord's invoices are due in two weeks.",
        "2026-01-02",
        "2026-01-02",
        "unrelated",
    ),
    # a context qualifier (personal / work) makes both true; "MIT" is no German stop word
    (
        "The user releases personal projects under MIT.",
        "The user releases work projects under BSD-3-Clause.",
        "2026-01-02",
        "2026-01-02",
        "related",
    ),
    # two schedules, one on each side: two facts, not one statement with an added detail
    (
        "Kestrel's canary ring gets new builds on Tuesdays.",
        "Kestrel's broad ring gets new builds ten days after the canary.",
        "2026-01-02",
        "2026-01-02",
        "related",
    ),
    # the change names an old value of another thing of the same owner: nothing superseded
    (
        "Kestrel's 2024 postmortems are archived in Notion.",
        "Kestrel's playbooks moved from Notion to the docs/playbooks folder.",
        "2026-01-02",
        "2026-03-02",
        "related",
    ),
    (
        "Kestrel's playbooks live in the ops space in Notion.",
        "Kestrel's playbooks moved from Notion to the docs/playbooks folder.",
        "2026-01-02",
        "2026-03-02",
        "supersedes",
    ),
    # common abbreviations, and a type word leading one of them
    (
        "Kestrel's machine learning engineers own the model registry.",
        "Kestrel's MLEs own the model registry.",
        "2026-01-02",
        "2026-02-02",
        "same",
    ),
    (
        "Kestrel pushes over-the-air updates through CloudFront.",
        "Kestrel pushes OTA updates through CloudFront.",
        "2026-01-02",
        "2026-02-02",
        "same",
    ),
    (
        "Decided: Kestrel release notes get a dated line at the end of the changelog.",
        "Kestrel release notes get a dated line at the end of the changelog.",
        "2026-01-02",
        "2026-02-02",
        "same",
    ),
]


@pytest.fixture(scope="module")
def judge() -> OfflineJudge:
    texts = [t for p in PAIRS for t in p[:2]]
    return OfflineJudge(analyzer=Analyzer.for_texts(texts))


@pytest.mark.parametrize(("older", "newer", "d1", "d2", "expected"), PAIRS)
def test_verdicts(
    judge: OfflineJudge, older: str, newer: str, d1: str, d2: str, expected: str
) -> None:
    a = EntryView("a", older, scope="project", created_at=d1)
    b = EntryView("b", newer, scope="project", created_at=d2)
    for x, y in ((a, b), (b, a)):  # either order
        j = judge.judge([(x, y)])[0]
        assert j.verdict == Verdict(expected), j.reason
        assert j.reason and 0 < j.confidence <= 1
        if j.verdict is Verdict.SUPERSEDES:
            assert j.newer == "b"


def test_scope_is_a_wall(judge: OfflineJudge) -> None:
    a = EntryView("a", "Tests run with make test.", scope="project", created_at="2026-01-01")
    b = EntryView("b", "Tests run with make test.", scope="global", created_at="2026-01-01")
    j = judge.judge([(a, b)])[0]
    assert j.verdict is Verdict.UNRELATED and "scope" in j.reason


def test_change_wording_on_one_date_decides_which_is_newer(judge: OfflineJudge) -> None:
    a = EntryView("a", "Kestrel support moved from Zendesk to Help Scout.", created_at="2026-01-01")
    b = EntryView("b", "Kestrel support runs in Zendesk.", created_at="2026-01-01")
    j = judge.judge([(a, b)])[0]
    assert j.verdict is Verdict.SUPERSEDES and j.newer == "a"


def test_embedder_is_a_parameter_and_part_of_the_judge_id() -> None:
    emb = HashingEmbedder()
    j = OfflineJudge(embedder=emb)
    assert isinstance(j, Judge)
    assert emb.id in j.judge_id and j.judge_id != OfflineJudge().judge_id
    a = EntryView("a", "Kestrel keeps four replicas.", created_at="2026-01-01")
    b = EntryView("b", "Kestrel keeps 4 replicas.", created_at="2026-01-02")
    assert j.judge([(a, b)])[0].verdict is Verdict.SAME


def test_two_names_in_one_place_are_an_uncertain_flag(judge: OfflineJudge) -> None:
    """ "runs NixOS" / "runs containers with Podman": the swapped names may be two things (an
    OS and a container tool), so the flag is below the confidence that suggests archiving."""
    a = EntryView("a", "Kestrel's build box runs NixOS.", scope="project", created_at="2026-01-02")
    b = EntryView(
        "b",
        "On Kestrel's build box the team runs containers with Podman.",
        scope="project",
        created_at="2026-03-02",
    )
    j = OfflineJudge(analyzer=Analyzer.for_texts([a.text, b.text])).judge([(a, b)])[0]
    assert j.verdict in (Verdict.SUPERSEDES, Verdict.CONFLICT, Verdict.RELATED), j.reason
    assert j.confidence < 0.7, j.reason


def test_a_change_in_another_language_supersedes_instead_of_merging() -> None:
    a = EntryView(
        "a",
        "Kestrel exports its metrics to metrics.kestrel.internal.",
        scope="project",
        created_at="2026-01-02",
    )
    b = EntryView(
        "b",
        "Kestrel exporte désormais ses métriques vers metrics.kestrel.internal.",
        scope="project",
        created_at="2026-03-02",
    )
    j = OfflineJudge(analyzer=Analyzer.for_texts([a.text, b.text])).judge([(a, b)])[0]
    assert j.verdict is Verdict.SUPERSEDES and j.newer == "b", j.reason
    assert j.confidence < 0.7  # across languages: a review item that suggests keeping both
