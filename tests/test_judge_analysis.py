"""The offline analysis of one entry: aliases, values, qualifiers, change wording."""

from __future__ import annotations

from memcore.judge.aliases import AliasTable
from memcore.judge.analysis import Analyzer, analyse, detect_lang, stem


def norms(text: str, kind: str | None = None) -> set[str]:
    return {v.norm for v in analyse(text).values if kind is None or v.kind == kind}


def test_builtin_aliases_resolve_to_one_token() -> None:
    a = analyse("The k8s ingress uses TF modules from the GH repo in prod.")
    b = analyse(
        "The Kubernetes ingress uses Terraform modules from the GitHub repository in production."
    )
    assert a.tokens == b.tokens


def test_alias_table_resolves_longest_phrase_first() -> None:
    t = AliasTable.builtin()
    assert t.resolve(["ci", "cd"]) == ["continuous_integration", "continuous_delivery"]
    assert t.resolve(["continuous", "integration", "and", "delivery"]) == [
        "continuous_integration",
        "continuous_delivery",
    ]
    assert t.resolve(["pull", "requests", "merged"]) == ["pull_request", "merged"]


def test_aliases_learned_from_the_memory_itself() -> None:
    t = AliasTable.builtin()
    learned = t.learn(["Deploys go through ZDR (zero-downtime release).", "Kestrel (KS) jobs"])
    assert ("ZDR", "zero-downtime release") in learned
    an = Analyzer(aliases=t)
    assert (
        an.analyse("ZDR needs two approvals").tokens[0]
        == an.analyse("zero-downtime release needs two approvals").tokens[0]
    )
    # "Kestrel (KS)": the short form inside the parentheses
    assert t.resolve(["ks"]) == ["kestrel"]


def test_counts_written_as_words_become_numbers() -> None:
    assert norms("Runs three replicas.", "num") == norms("Runs 3 replicas.", "num") == {"3"}
    assert norms("Links expire after twenty-four hours.", "num") == {"24|h"}
    assert norms("Le cache garde quatre copies.", "num") == {"4"}
    assert norms("Der Job hat zwölf Versuche.", "num") == {"12"}
    assert norms("Se reintenta cinco veces.", "num") == {"5|x"}
    assert norms("Releases ship every week.", "num") == {"1|week"}
    # "one" as a pronoun is no count
    assert norms("She is the one with admin rights.", "num") == set()


def test_units_are_the_same_across_languages() -> None:
    assert norms("Backups run every 6 hours.", "num") == {"6|h"}
    assert norms("Die Sicherung läuft alle 6 Stunden.", "num") == {"6|h"}
    assert norms("La sauvegarde tourne toutes les 6 heures.", "num") == {"6|h"}
    assert norms("备份每 6 小时运行一次。", "num") == {"6|h"}
    assert norms("行は72文字以内にする。", "num") == {"72|char"}
    assert norms("The bundle stays under 300 KB gzipped.", "num") == {"300|kb"}


def test_values_paths_versions_identifiers_names() -> None:
    an = analyse("Kestrel's API moved from v1 to /api/v2 on db-03.internal (see docs/api.md).")
    kinds = {(v.kind, v.norm) for v in an.values}
    assert ("path", "/api/v2") in kinds
    assert ("path", "docs/api.md") in kinds
    assert ("ident", "db-03.internal") in kinds
    assert ("name", "kestrel") in kinds
    assert ("num", "v1") in kinds or ("num", "1") in kinds
    an2 = analyse("Pin `ruff==0.6.9` and run `make lint` before pushing.")
    assert "make lint" in {v.norm for v in an2.values if v.kind == "code"}


def test_sentence_start_capitals_are_names_only_when_the_memory_says_so() -> None:
    plain = Analyzer()
    assert "never" not in plain.analyse("Never deploy on Fridays.").names
    known = Analyzer.for_texts(["We deploy Kestrel nightly.", "Kestrel is written in Go."])
    assert "kestrel" in known.analyse("Kestrel is written in Go.").names
    # German capitalises nouns: they are not names
    assert "stunden" not in known.analyse("Kestrel sichert alle 6 Stunden.").names


def test_qualifiers() -> None:
    def q(text: str) -> set[tuple[str, str]]:
        return set(analyse(text).qualifiers)

    assert ("env", "staging") in q("Staging runs Node 20.")
    assert ("env", "production") in q("Prod runs Node 18.")
    assert ("component", "worker") in q("The worker logs at DEBUG.")
    assert ("platform", "ios") in q("The iOS app is built on Xcode Cloud.")
    assert ("limit", "default") in q("The default page size is 20.")
    assert ("limit", "max") in q("The max page size is 100.")
    assert ("window", "weekends") in q("On weekends deploys need approval.")
    assert ("window", "after-hours") in q("Outside business hours only P1 pages.")
    assert ("window", "business-hours") not in q("Outside business hours only P1 pages.")
    assert ("rw", "read") in q("The read timeout is 30 s.")
    assert ("role", "admin") in q("Admins can edit every entity.")
    assert ("owner", "kofi") in q("Kofi's laptop runs Fedora.")


def test_change_wording_and_negation() -> None:
    assert analyse("CI moved from Jenkins to Buildkite.").change
    assert analyse("We no longer use Rollbar.").change
    assert analyse("Le cache est désormais dans Redis.").change
    assert analyse("Wir nutzen jetzt Loki.").change
    assert analyse("Ahora usamos Loki.").change
    assert not analyse("CI runs on Buildkite.").change
    assert analyse("Do not commit .env files.").negated
    assert analyse("Store money as cents rather than floats.").negated
    assert not analyse("No more than 5 bullet points.").negated


def test_language_and_stems() -> None:
    assert detect_lang("The cache is warm.") == "en"
    assert detect_lang("Le cache est dans la base de données.") == "fr"
    assert detect_lang("Der Cache ist in der Datenbank.") == "de"
    assert detect_lang("El caché está en la base de datos.") == "es"
    assert detect_lang("缓存在数据库里。") == "zh"
    assert detect_lang("キャッシュはデータベースにある。") == "ja"
    assert stem("created") == stem("creates") == stem("create")
    assert stem("restarts") == stem("restart")


def test_to_json_summary() -> None:
    doc = analyse("Staging moved to port 8443 now.").to_json()
    assert doc["qualifiers"] == ["env:staging"]
    assert {"kind": "num", "value": "8443", "slot": "@port"} in doc["values"]
    assert "now" in doc["change"]


def _pattern_only(text: str) -> tuple[tuple[str, str], ...]:
    """The tokens of the value patterns over the whole text (what raw_tokens must give)."""
    from memcore.judge.analysis import _TOKEN_RE

    return tuple(
        ("number" if (m.lastgroup or "word") == "unit" else (m.lastgroup or "word"), m.group(0))
        for m in _TOKEN_RE.finditer(text)
    )


def test_raw_tokens_plain_words_shortcut_gives_the_patterns_tokens() -> None:
    import random

    from memcore.judge.analysis import raw_tokens

    tricky = [
        "Deploy at 9:00 - 17:00 and pay $ 5, then v1.2 ships.",
        "Use `git push origin main` now; iPhone and eBay are identifiers.",
        "TF (Terraform) runs on k8s: see ./infra/main.tf or http://x.io/a.",
        "Kofi's dashboard: e.g. 20 ms, 5ms, 3 GB, 10% and 21°C!",
        "mail ops@example.com or #ops-chat, node_version=20 and a.b.c",
        "Prix : 5 € ; déjà vu — Grüße aus Köln 中文 あいう",
        "  double  spaces\tand a tab\nand a line  ",
    ]
    rng = random.Random(11)
    pieces = [*"abXY iPh0123456789 .,;:!?-/@#$_'’=()`~é中", " - ", "$ 5", "9:00", "v2"]
    fuzz = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 20))) for _ in range(3000)]
    for text in tricky + fuzz:
        assert raw_tokens(text) == _pattern_only(text), text


_MARKERS = (
    "now|no longer|not any more|anymore|moved|moving|switched|replaced|instead|deprecated|"
    "migrated|upgraded|bumped|downgraded|took over|taken over|handed it over|renamed|dropped|"
    "retired|stopped|changed|rewritten|removed|cancelled|gone|frozen|adopted|is back|back on|"
    "again|from now on|going forward|passed to|down to|lifted|abandoned|phased out|superseded|"
    "sunsetted|end of life|transitioned|tightened|raised to|lowered to|increased to|reduced to|"
    "under the new|this year|since the change|after the big-x upgrade|maintenant|jetzt|nun|"
    "nicht mehr|keine mehr|ersetzt|umgestellt|gewechselt|migriert|verschoben|stattdessen|ahora|"
    "ya no|reemplazado|sustituido|migrado|en lugar de|en vez de|n'est plus|ne fait plus|"
    "from|off|out of|instead of|replacing|dropping|stopped using|retiring|removal|deprecation|"
    "cancel|sunset|désormais|remplacée|现在改为|もう"
)
_MARKER_SAMPLES = _MARKERS.split("|")


def test_change_markers_shortcut_finds_what_the_patterns_find() -> None:
    import random

    from memcore.judge import analysis as an

    def by_pattern(text: str) -> tuple[set[str], bool]:
        change = {m.group(0).lower() for m in an._CHANGE_RE.finditer(text)}
        change |= {c for c in an._CJK_CHANGE if c in text}
        return change, an._CHANGE_OBJECT_HINT_RE.search(text) is not None

    rng = random.Random(5)
    words = [
        *_MARKER_SAMPLES,
        *["the", "a", "ports", "x-y", "v2", "over-the", "nowhere", "snow", "known", "Kofi"],
    ]
    texts = [f"The {s} part." for s in _MARKER_SAMPLES] + [s.upper() for s in _MARKER_SAMPLES]
    texts += [" ".join(rng.choice(words) for _ in range(rng.randint(1, 8))) for _ in range(5000)]
    for text in texts:
        assert (an._change_words(text), an._has_change_object_hint(text)) == by_pattern(text)
    assert all(by_pattern(f"The {s} part.") != (set(), False) for s in _MARKER_SAMPLES)
