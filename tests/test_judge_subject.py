"""Subject identity and the value-comparison rules of the offline judge, on hand-written pairs.

Values are compared only once the subjects match, and a swapped value is a contradiction only
when it is the one thing that differs.
"""

from __future__ import annotations

import pytest

from memcore.dream.reconcile import SUGGEST_MIN
from memcore.judge.analysis import Analyzer
from memcore.judge.offline import OfflineJudge
from memcore.judge.protocol import EntryView, Verdict
from memcore.judge.subject import name_covered, names_disjoint, subjects_differ

# entries that name the projects mid-sentence, so the analyzer knows they are names
CONTEXT = [
    "We deploy Vireo and Brindle on Fridays.",
    "The on-call for Vireo, Brindle and Calloway is shared.",
    "Ask Tamsin or Osric about releases.",
]

PAIRS: list[tuple[str, str, str, str, set[str]]] = [
    # (older, newer, older date, newer date, allowed verdicts)
    (  # one sentence frame, two projects: no contradiction
        "Vireo runs 3 replicas in the prod cluster.",
        "Brindle runs three replicas in the prod cluster.",
        "2026-02-01",
        "2026-03-01",
        {"unrelated", "related"},
    ),
    (  # the old owner is named by the newer entry: one subject
        "Tamsin runs the Vireo releases.",
        "Osric took over the Vireo releases from Tamsin.",
        "2026-02-01",
        "2026-03-01",
        {"supersedes"},
    ),
    (  # a duration and another duration fill one slot
        "Vireo's offline mode lasts 8 hours.",
        "Vireo's offline mode lasts 2 days.",
        "2026-02-01",
        "2026-02-01",
        {"conflict"},
    ),
    (  # "now" about Kafka, but another attribute of it
        "Vireo's staging Kafka has 3 brokers.",
        "Vireo's Kafka client is now 3.7.",
        "2026-02-01",
        "2026-03-01",
        {"related", "unrelated"},
    ),
    (  # Pulumi is the new value, not the old one
        "Vireo's Pulumi stacks are written in TypeScript.",
        "Vireo moved from Terraform to Pulumi.",
        "2026-02-01",
        "2026-03-01",
        {"related", "unrelated"},
    ),
    (  # an attribute and its value both differ
        "Vireo's Android targetSdk is 34.",
        "The Vireo Android applicationId is app.vireo.fit.",
        "2026-02-01",
        "2026-03-01",
        {"related"},
    ),
    (  # a qualifier on one side only: the special case of the other
        "In staging, Brindle sends emails to Mailpit.",
        "Brindle sends invoice emails via Postmark.",
        "2026-02-01",
        "2026-03-01",
        {"related"},
    ),
    (  # a version at the end of a sentence keeps its last part
        "Brindle uses Phoenix 1.7.10.",
        "Brindle was upgraded to Phoenix 1.7.14.",
        "2026-02-01",
        "2026-03-01",
        {"supersedes"},
    ),
    (  # the newer entry's old value is one the older entry never said
        "Brindle bills EU customers in EUR.",
        "The Brindle billing cron moved from cron-07 to a Kubernetes CronJob.",
        "2026-02-01",
        "2026-03-01",
        {"related", "unrelated"},
    ),
    (  # two versioned things, each with its own version
        "Brindle's Airflow runs in Cloud Composer 2.",
        "Brindle's Composer environment is on Airflow 2.9.",
        "2026-02-01",
        "2026-03-01",
        {"related", "unrelated", "same"},
    ),
    (  # a language named on one side only
        "Brindle Java code uses 4-space indentation.",
        "Use 2-space indentation.",
        "2026-02-01",
        "2026-03-01",
        {"related", "unrelated"},
    ),
    (  # an abbreviation from the built-in table
        "Vireo's repo uses Git LFS for fixtures.",
        "Vireo's repository uses Git Large File Storage for fixtures.",
        "2026-02-01",
        "2026-03-01",
        {"same"},
    ),
    (  # an old version named by the change
        "The Vireo API is v3.",
        "Vireo's API is at v4; v3 is sunset in June.",
        "2026-02-01",
        "2026-03-01",
        {"supersedes"},
    ),
    (  # two languages, the same names and the same numbers, nothing else specific
        "Calloway keeps 40 nightly snapshots.",
        "Calloway conserve 40 instantanés de la base chaque nuit.",
        "2026-02-01",
        "2026-03-01",
        {"same"},
    ),
    (  # two languages that share only names: who, not what
        "Osric leads Calloway's compliance work.",
        "Osric ist der Datenschutzbeauftragte für Calloway.",
        "2026-02-01",
        "2026-03-01",
        {"related", "unrelated"},
    ),
    (  # two versions moved in one statement: an upgrade, not a qualifier
        "Calloway runs Erlang 25 with rebar 3.20.",
        "Calloway runs Erlang 26 with rebar 3.22.",
        "2026-02-01",
        "2026-03-01",
        {"supersedes"},
    ),
    (  # the words of the change phrase are not "other differences"
        "Calloway runs three Sidekiq workers.",
        "Calloway runs 5 Sidekiq workers since the capacity bump.",
        "2026-02-01",
        "2026-03-01",
        {"supersedes"},
    ),
    (  # the same number in two languages, about two projects
        "Vireo tile cache entries expire after 6 hours.",
        "La base de données de Brindle est sauvegardée toutes les 6 heures.",
        "2026-02-01",
        "2026-03-01",
        {"related", "unrelated"},
    ),
    (  # a bare number is no shared detail across languages
        "The local proxy listens on port 4000.",
        "Calloway のアラートは 4,000 USD を超えると発報する。",
        "2026-02-01",
        "2026-03-01",
        {"related", "unrelated"},
    ),
]


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer.for_texts([*CONTEXT, *(t for p in PAIRS for t in p[:2])])


@pytest.mark.parametrize(("older", "newer", "d1", "d2", "allowed"), PAIRS)
def test_verdicts(
    analyzer: Analyzer, older: str, newer: str, d1: str, d2: str, allowed: set[str]
) -> None:
    judge = OfflineJudge(analyzer=analyzer)
    a = EntryView("a", older, scope="project", created_at=d1)
    b = EntryView("b", newer, scope="project", created_at=d2)
    for x, y in ((a, b), (b, a)):
        j = judge.judge([(x, y)])[0]
        assert j.verdict is not None and j.verdict.value in allowed, j.reason
        if j.verdict is Verdict.SUPERSEDES:
            assert j.newer == "b"


def test_subjects_differ_only_when_neither_names_the_other(analyzer: Analyzer) -> None:
    orbit = analyzer.analyse("Vireo runs 3 replicas.")
    atlas = analyzer.analyse("Brindle runs 3 replicas.")
    both = analyzer.analyse("Brindle mirrors Vireo's 3 replicas.")
    assert subjects_differ(orbit, atlas)
    assert not subjects_differ(orbit, both) and not subjects_differ(atlas, both)
    assert not subjects_differ(orbit, analyzer.analyse("The cluster runs 3 replicas."))
    assert names_disjoint(orbit, atlas) and not names_disjoint(orbit, both)


def test_names_are_covered_by_stem_or_suffix_never_by_a_shared_prefix(analyzer: Analyzer) -> None:
    an = analyzer.analyse("Vireo keeps its metrics in TimescaleDB.")
    use = analyzer.analyse("Use Timescale for it.")
    timescale = next(v for v in use.values if v.kind == "name")
    assert name_covered(timescale, an)
    grunt = analyzer.analyse("We wrap it with Terragrunt.")
    form = next(v for v in analyzer.analyse("We use Terraform, Osric says.").values if v.norm)
    assert form.kind == "name" and not name_covered(form, grunt)


def test_versions_and_change_objects(analyzer: Analyzer) -> None:
    v = analyzer.analyse("Pin Brindle to 2.4.x. Node is 20.11.1.").values
    assert {x.norm for x in v if x.kind == "num"} == {"2.4.x", "20.11.1"}
    moved = analyzer.analyse("Vireo moved from Terraform to Pulumi.")
    assert moved.change_objects == ("terraform",)
    gone = analyzer.analyse("Vireo no longer exports to S3.")
    assert gone.change_objects == ("exports to s3",)


def test_a_change_that_points_elsewhere_is_never_a_confident_supersession(
    analyzer: Analyzer,
) -> None:
    """A change "off Firebase Functions" names an old value; the older entry is about a Firebase
    project: at most an uncertain flag (review suggests keeping both), never applied."""
    judge = OfflineJudge(analyzer=analyzer)
    a = EntryView("a", "Vireo's prod Firebase project is vireo-prod-3c1.", created_at="2026-02-01")
    b = EntryView(
        "b", "Vireo's backend moved off Firebase Functions to Cloud Run.", created_at="2026-03-01"
    )
    j = judge.judge([(a, b)])[0]
    assert j.verdict is not Verdict.SAME
    assert j.verdict is not Verdict.SUPERSEDES or j.confidence < SUGGEST_MIN, j.reason


def test_a_detail_in_place_of_other_words_is_not_an_added_detail(analyzer: Analyzer) -> None:
    judge = OfflineJudge(analyzer=analyzer)
    a = EntryView(
        "a", "Vireo's events API returns dates as RFC 3339 strings.", created_at="2026-02-01"
    )
    b = EntryView(
        "b", "Vireo's events API returns dates in epoch seconds.", created_at="2026-02-01"
    )
    j = judge.judge([(a, b)])[0]
    assert j.verdict is not Verdict.SAME, j.reason


def test_a_value_swap_whose_subject_only_one_side_names_is_uncertain(analyzer: Analyzer) -> None:
    """A swap like "Always run the Vireo smoke tests with TZ=UTC" / "Smoke tests need Docker": the
    values may belong to two different test suites, so the flag suggests keeping both."""
    judge = OfflineJudge(analyzer=analyzer)
    a = EntryView("a", "Smoke tests need Docker running.", created_at="2026-02-01")
    b = EntryView("b", "Always run the Vireo smoke tests with TZ=UTC.", created_at="2026-03-01")
    j = judge.judge([(a, b)])[0]
    assert j.verdict is not Verdict.SAME
    assert j.confidence < SUGGEST_MIN or j.verdict in (Verdict.RELATED, Verdict.UNRELATED)


def test_or_later_is_a_minimum(analyzer: Analyzer) -> None:
    assert ("limit", "min") in analyzer.analyse("Vireo requires Android 12 or later.").qualifiers
