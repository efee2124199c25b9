"""Promotion checks what memory already says, holds the size budget, and dream runs are
bounded by ``max_loss_fraction``; the report names every kind of change."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from click.testing import Result

from memcore.promotion.dedupe import already_stated, normalized
from memcore.workspace.core import Workspace
from memcore.workspace.entries import parse
from tests.conftest import invoke as run_cli


@dataclass
class E:
    text: str


def test_already_stated_exact_and_near_exact_but_never_other_numbers() -> None:
    entries = [E("The cache TTL is 300 seconds."), E("Use pnpm for all installs in CI.")]
    assert already_stated("- the cache ttl is 300 SECONDS!", entries) is entries[0]
    assert already_stated("Use pnpm for all the installs in CI", entries) is entries[1]
    assert already_stated("The cache TTL is 600 seconds.", entries) is None
    assert already_stated("Do not use pnpm for all installs in CI.", entries) is None
    assert already_stated("Something else entirely.", entries) is None
    trailer = "- The cache TTL is 300 seconds. [score=0.900 recalls=4 avg=0.950 source=m.md:1-1]"
    assert normalized(trailer) == "the cache ttl is 300 seconds"


def test_already_stated_in_other_function_words_but_never_another_thing() -> None:
    """The same content words (function words dropped, plurals folded) state the same fact;
    one content word of a short statement changed, or another number, is another fact."""
    entries = [E("dbt models: a `unique` and a `not_null` test on the key of every new model")]
    reworded = "Decision: every new dbt model gets a `unique` and a `not_null` test on its key"
    assert already_stated(reworded, entries) is entries[0]
    assert already_stated("every new dbt model gets a `unique` test on its key", entries) is None
    deploys = [E("Deploys go through the blue/green pipeline on Fridays.")]
    assert already_stated("Deploys go through the canary pipeline on Fridays.", deploys) is None
    ttl = [E("The idempotency keys of payouts are kept for 72 hours in Redis.")]
    assert already_stated("Payout idempotency keys: kept 72 hours in Redis", ttl) is ttl[0]
    assert already_stated("Payout idempotency keys: kept 24 hours in Redis", ttl) is None
    assert already_stated("Payout idempotency keys are not kept in Redis", ttl) is None


def test_already_stated_never_takes_one_named_thing_swapped_for_another() -> None:
    """A long statement that shares every word but one named thing states another fact; an
    added or dropped word, or a swapped quantifier, still states the same one."""
    ana = [E("Ana owns the billing service and its on-call rota, and answers pages for it.")]
    assert (
        already_stated(
            "Ana owns the payments service and its on-call rota, and answers pages for it.", ana
        )
        is None
    )
    assert (
        already_stated(
            "Ana owns the billing service and its on-call rota, and she answers pages for it.", ana
        )
        is ana[0]
    )
    ci = [E("Run the whole lint suite on all pull requests before the nightly build starts.")]
    assert (
        already_stated(
            "Run the whole lint suite on every pull request before the nightly build starts.", ci
        )
        is ci[0]
    )
    assert (
        already_stated(
            "Run the whole lint suite on every pull request before the weekly build starts.", ci
        )
        is None
    )


NOTE = (
    "# 2026-11-20\n\n"
    "- Deploys go through the blue/green pipeline on Fridays.\n"
    "- Deploys go through the blue-green pipeline on Fridays!\n"
    "- Ana owns the billing service and its on-call rota.\n"
    "- The staging database is db-stg-02 in eu-west-1.\n"
)


def seed(ws: Workspace, lines: list[int]) -> list[str]:
    from memcore.recall.store import record_recalls
    from memcore.workspace.clock import utcnow

    (ws.memory_dir / "2026-11-20.md").write_text(NOTE, encoding="utf-8")
    base = utcnow().replace(microsecond=0)
    keys = []
    for line in lines:
        hit = {
            "path": "memory/2026-11-20.md",
            "startLine": line,
            "endLine": line,
            "score": 0.95 - line / 100,
            "snippet": NOTE.split("\n")[line - 1],
        }
        out = None
        for i in range(4):
            out = record_recalls(ws, f"q{line} {i}", [hit], now=base - timedelta(hours=i + 1))
        assert out is not None
        keys.append(out.keys[0])
    return keys


def invoke(ws: Workspace, *args: str, code: int = 0, stdin: str | None = None) -> Result:
    res = run_cli(ws, *args, input=stdin)
    assert res.exit_code == code, res.output
    return res


def store(ws: Workspace) -> dict[str, Any]:
    return json.loads(ws.store_path.read_text(encoding="utf-8"))["entries"]


def test_a_candidate_memory_already_states_reinforces_it_and_undo_takes_that_back(
    ws: Workspace,
) -> None:
    from memcore.dream import tables
    from memcore.recall import ledger

    text = "# Long-Term Memory\n\n- Deploys go through the blue/green pipeline on fridays\n"
    ws.memory_md.write_text(text, encoding="utf-8")
    eid = parse(text).entries[0].id
    (key,) = seed(ws, [3])
    res = json.loads(invoke(ws, "memory", "promote", "--apply", "--json").stdout)["apply"]
    assert res["appended"] == 0 and res["applied"] == 1
    assert res["reinforcedExisting"] == [{"id": eid, "keys": [key]}]
    assert ws.memory_md.read_text(encoding="utf-8") == text  # no copy added
    assert store(ws)[key]["promotedAt"]
    with tables.connect(ws) as conn:
        row = ledger.load_rows(conn, [eid])[eid]
    assert row.access_count == 1 and row.importance == pytest.approx(0.55)
    invoke(ws, "undo")
    assert "promotedAt" not in store(ws)[key]
    with tables.connect(ws) as conn:
        row = ledger.load_rows(conn, [eid])[eid]
    assert row.access_count == 0 and row.importance == 0.5  # as it was before


def test_two_candidates_of_one_batch_that_say_the_same_are_promoted_once(ws: Workspace) -> None:
    ws.memory_md.write_text("# Long-Term Memory\n\n- Keep PRs small.\n", encoding="utf-8")
    k1, k2 = seed(ws, [3, 4])
    res = json.loads(invoke(ws, "memory", "promote", "--apply", "--json").stdout)["apply"]
    assert res["appended"] == 1 and res["applied"] == 2
    text = ws.memory_md.read_text(encoding="utf-8")
    assert text.count("pipeline on Fridays") == 1
    entries = store(ws)
    assert entries[k1]["promotedAt"] and entries[k2]["promotedAt"]


def test_the_budget_holds_promotions_back_best_first_and_says_which(ws: Workspace) -> None:
    base = "# Long-Term Memory\n\n" + "".join(f"- Fact number {i} is here.\n" for i in range(40))
    ws.memory_md.write_text(base, encoding="utf-8")
    k3, _k5, _k6 = seed(ws, [3, 5, 6])
    budget = len(base) + 290  # room for the section and about two bullets
    ws.config_path.write_text(f"[memory]\nbudget_chars = {budget}\n", encoding="utf-8")
    res = json.loads(invoke(ws, "memory", "promote", "--apply", "--json").stdout)["apply"]
    held = [h["key"] for h in res["heldBack"]]
    assert res["appended"] >= 1 and held and k3 not in held
    assert len(ws.memory_md.read_text(encoding="utf-8")) <= budget
    assert all("budget_chars" in h["reason"] for h in res["heldBack"])
    assert all("promotedAt" not in store(ws)[k] for k in held)  # promotable later
    status = json.loads(invoke(ws, "memory", "status", "--json").stdout)
    assert status["memorySize"]["budgetChars"] == budget


def test_a_memory_already_over_budget_is_one_line_error_and_nothing_written(
    ws: Workspace,
) -> None:
    base = "# Long-Term Memory\n\n" + "".join(f"- Fact number {i} is here.\n" for i in range(80))
    ws.memory_md.write_text(base, encoding="utf-8")
    seed(ws, [3])
    before = ws.store_path.read_bytes()
    ws.config_path.write_text("[memory]\nbudget_chars = 1000\n", encoding="utf-8")
    res = invoke(ws, "memory", "promote", "--apply", code=1)
    assert res.stderr.count("\n") == 1
    assert f"MEMORY.md is {len(base)} characters, over [memory] budget_chars = 1000" in res.stderr
    assert ws.memory_md.read_text(encoding="utf-8") == base
    assert ws.store_path.read_bytes() == before
    status = invoke(ws, "memory", "status").stdout
    assert f"{len(base)} of 1000 characters" in status
    ws.config_path.write_text("[memory]\nbudget_chars = 5\n", encoding="utf-8")
    res = invoke(ws, "memory", "promote", "--apply", code=1)
    assert "budget_chars = 5 is out of range" in res.stderr


def test_dream_names_its_promotions_in_the_report_question_and_summary(ws: Workspace) -> None:
    ws.memory_md.write_text("# Long-Term Memory\n\n- Keep PRs small.\n", encoding="utf-8")
    seed(ws, [5])
    res = invoke(ws, "dream", "--apply", stdin="\n")
    assert "Promotions (1):" in res.stdout
    assert "Proposed: 1 promotions, 0 merges, 0 prunes, 0 conflicts. Apply? [Y/n]" in res.stdout
    assert "Dream complete — promoted: 1, merged: 0" in res.stdout
    assert "billing service" in ws.memory_md.read_text(encoding="utf-8")


def test_dream_auto_line_names_promotions(ws: Workspace) -> None:
    ws.memory_md.write_text("# Long-Term Memory\n\n- Keep PRs small.\n", encoding="utf-8")
    seed(ws, [5])
    res = invoke(ws, "dream", "--auto")
    assert f"workspace={ws.root} promoted=1 merged=0 pruned=0 conflicts_skipped=0" in res.stdout


LOSSY = (
    "# Long-Term Memory\n\n"
    + "".join(
        f'<!-- memcore:entry id="old{i}" type="session_state" created="2025-01-01" -->\n'
        f"- Debugging session {i} notes.\n"
        for i in range(6)
    )
    + "".join(f"- Lasting fact {i}.\n" for i in range(6))
)


def test_a_run_over_max_loss_fraction_is_refused_whole_with_the_numbers(ws: Workspace) -> None:
    ws.memory_md.write_text(LOSSY, encoding="utf-8")
    res = invoke(ws, "dream", "--auto", "--only", "forget", code=1)
    assert "would remove or rewrite 6 of 12 MEMORY.md entries (50%)" in res.stderr
    assert "max_loss_fraction = 0.25" in res.stderr and res.stderr.count("\n") == 1
    assert ws.memory_md.read_text(encoding="utf-8") == LOSSY
    assert not ws.archive_path.exists()
    res = invoke(ws, "dream", "--apply", "--yes", "--only", "forget", code=1)
    assert ws.memory_md.read_text(encoding="utf-8") == LOSSY
    ws.config_path.write_text("[consolidation]\nmax_loss_fraction = 0.5\n", encoding="utf-8")
    invoke(ws, "dream", "--auto", "--only", "forget")
    assert "Debugging" not in ws.memory_md.read_text(encoding="utf-8")


def test_interactive_apply_may_override_the_bound_after_showing_the_list(ws: Workspace) -> None:
    ws.memory_md.write_text(LOSSY, encoding="utf-8")
    res = invoke(ws, "dream", "--apply", "--only", "forget", stdin="\nn\n")
    assert "more than [consolidation] max_loss_fraction" in res.stdout
    assert "old0" in res.stdout and ws.memory_md.read_text(encoding="utf-8") == LOSSY
    res = invoke(ws, "dream", "--apply", "--only", "forget", stdin="\ny\n")
    assert "Dream complete" in res.stdout
    assert "Debugging" not in ws.memory_md.read_text(encoding="utf-8")


def test_dream_apply_json_keeps_stdout_one_json_document(ws: Workspace) -> None:
    ws.memory_md.write_text("# Long-Term Memory\n\n- Keep PRs small.\n", encoding="utf-8")
    seed(ws, [5])
    res = invoke(ws, "dream", "--apply", "--json", stdin="\n")
    doc = json.loads(res.stdout)  # the report and the question went to stderr
    assert doc["promoted"] == 1
    assert "Promotions (1):" in res.stderr and "Apply? [Y/n]" in res.stderr
    assert "billing service" in ws.memory_md.read_text(encoding="utf-8")


def test_dream_apply_json_answered_no_is_a_json_cancel(ws: Workspace) -> None:
    base = "# Long-Term Memory\n\n- Keep PRs small.\n"
    ws.memory_md.write_text(base, encoding="utf-8")
    seed(ws, [5])
    res = invoke(ws, "dream", "--apply", "--json", stdin="n\n")
    doc = json.loads(res.stdout)
    assert doc["applied"] is False and doc["cancelled"] is True
    assert ws.memory_md.read_text(encoding="utf-8") == base
