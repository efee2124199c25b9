"""Promotion into a Hermes MEMORY.md writes Hermes' own format: one ``§`` entry per promoted
snippet, within Hermes' 2,200-character limit (an entry that does not fit is held back and
named, never cut), as one journaled run that ``memcore undo`` takes back byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

from memcore.recall.store import record_recalls
from memcore.workspace.clock import utcnow
from memcore.workspace.core import Workspace, resolve_workspace
from memcore.workspace.kinds import kind_of
from memcore.workspace.layouts.hermes import split_entries
from tests.conftest import invoke

EXISTING = "The NAS backs up nightly.\n§\nVPN is wg0.\n"
FACTS = [
    "The staging database is db-stage-2 on port 5433.",
    "Releases are tagged vYYYY.MM.N and signed with the team key.",
]


def hermes(tmp_path: Path, memory: str = EXISTING) -> Workspace:
    root = tmp_path / ".hermes" / "memories"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(memory, encoding="utf-8")
    (root / "USER.md").write_text("Name is Ana.\n", encoding="utf-8")
    ws = resolve_workspace(root)
    assert kind_of(root).name == "hermes"
    now = utcnow()
    day = now.date().isoformat()
    rel = f"memory/{day}.md"
    (root / rel).write_text(f"# {day}\n\n{FACTS[0]}\n\n{FACTS[1]}\n", encoding="utf-8")
    for line, fact in ((3, FACTS[0]), (5, FACTS[1])):
        for i in range(5):
            record_recalls(
                ws,
                f"question {i} about line {line}",
                [{"path": rel, "startLine": line, "endLine": line, "score": 0.97, "snippet": fact}],
                now=now,
            )
    return ws


def promote(ws: Workspace) -> dict:
    r = invoke(ws, "memory", "promote", "--apply", "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_promote_appends_hermes_entries_and_undo_restores_the_bytes(tmp_path: Path) -> None:
    ws = hermes(tmp_path)
    before = ws.memory_md.read_bytes()
    out = promote(ws)
    text = ws.memory_md.read_text(encoding="utf-8")
    assert text.startswith(EXISTING)  # every byte of the file kept
    assert split_entries(text)[:2] == ["The NAS backs up nightly.", "VPN is wg0."]
    assert sorted(split_entries(text)[2:]) == sorted(FACTS)
    assert "<!--" not in text and "[score=" not in text and "##" not in text
    assert out["apply"]["appended"] == 2 and out["apply"]["format"] == "hermes"
    assert (ws.root / "USER.md").read_text() == "Name is Ana.\n"
    run_id = out["apply"]["runId"]
    again = promote(ws)  # promoted keys are marked: nothing is appended twice
    assert again["apply"]["appended"] == 0 and ws.memory_md.read_text() == text
    hist = json.loads(invoke(ws, "history", "--json").stdout)["runs"]
    assert [r["kind"] for r in hist if r["runId"] == run_id] == ["promote"]
    back = invoke(ws, "undo", run_id, "--json")
    assert back.exit_code == 0, back.output
    assert json.loads(back.stdout)["exact"] and ws.memory_md.read_bytes() == before


def test_an_entry_over_the_limit_is_held_back_and_named(tmp_path: Path) -> None:
    filler = "x" * (2200 - len(EXISTING) - len(FACTS[0]) - 8)
    memory = EXISTING + "§\n" + filler + "\n"
    ws = hermes(tmp_path, memory)
    r = invoke(ws, "memory", "promote", "--apply")
    assert r.exit_code == 0, r.output
    text = ws.memory_md.read_text(encoding="utf-8")
    assert len(text) <= 2200
    assert split_entries(text)[-1] == FACTS[0]  # the one that fits
    assert FACTS[1] not in text  # nothing half-written
    (held,) = [ln for ln in r.stdout.splitlines() if ln.startswith("held back ")]
    assert "allowed: at most 2200" in held and str(ws.memory_md) in held
    assert "memory:memory/" in held  # the recall key it names


def test_undo_after_hermes_edited_the_file_takes_out_only_its_entries(tmp_path: Path) -> None:
    ws = hermes(tmp_path)
    run_id = promote(ws)["apply"]["runId"]
    edited = ws.memory_md.read_text(encoding="utf-8") + "§\nHermes added this later.\n"
    ws.memory_md.write_text(edited, encoding="utf-8")
    r = invoke(ws, "undo", run_id)
    assert r.exit_code == 0, r.output
    assert ws.memory_md.read_text() == EXISTING + "§\nHermes added this later.\n"
    # an entry of the run edited since: the undo is refused and changes nothing
    ws2 = hermes(tmp_path / "two")
    run2 = promote(ws2)["apply"]["runId"]
    changed = ws2.memory_md.read_text().replace(FACTS[0], FACTS[0] + " (moved)")
    ws2.memory_md.write_text(changed)
    refused = invoke(ws2, "undo", run2)
    assert refused.exit_code != 0 and "edited or removed since" in refused.output
    assert ws2.memory_md.read_text() == changed


def test_dream_apply_promotes_in_hermes_format_and_leaves_the_rest(tmp_path: Path) -> None:
    ws = hermes(tmp_path, "The NAS backs up nightly.\n§\nThe NAS backs up nightly at 2am.\n")
    before = ws.memory_md.read_bytes()
    r = invoke(ws, "dream", "--auto", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["promoted"] == 2 and out["merged"] == 0
    text = ws.memory_md.read_text()
    assert text.startswith(before.decode()) and set(FACTS) <= set(split_entries(text))
    assert "only promotion runs here" in r.stderr and "left to Hermes" in r.stderr
    back = invoke(ws, "undo", "--json")
    assert back.exit_code == 0, back.output
    assert ws.memory_md.read_bytes() == before


def test_import_into_hermes_appends_entries_or_refuses_past_the_limit(tmp_path: Path) -> None:
    ws = hermes(tmp_path)
    before = ws.memory_md.read_bytes()
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        json.dumps({"text": "Deploys go out on Fridays."})
        + "\n"
        + json.dumps({"text": "VPN is wg0."})  # already an entry: skipped as a duplicate
        + "\n"
    )
    r = invoke(ws, "import", str(rows), "--apply", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["imported"] == 1
    assert ws.memory_md.read_text() == EXISTING + "§\nDeploys go out on Fridays.\n"
    undone = invoke(ws, "undo", "--json")
    assert undone.exit_code == 0, undone.output
    assert ws.memory_md.read_bytes() == before
    big = tmp_path / "big.jsonl"
    big.write_text(
        "".join(json.dumps({"text": f"Fact {i}: " + "y" * 300}) + "\n" for i in range(8))
    )
    r = invoke(ws, "import", str(big), "--apply")
    assert r.exit_code == 1
    (line,) = r.output.strip().splitlines()
    assert "allowed: at most 2200 (Hermes' limit for MEMORY.md); nothing was imported" in line
    assert ws.memory_md.read_bytes() == before


def test_memory_set_writes_no_marker_into_hermes(tmp_path: Path) -> None:
    from memcore.workspace.entries import parse

    ws = hermes(tmp_path)
    before = ws.memory_md.read_bytes()
    (entry,) = parse(EXISTING).entries
    r = invoke(ws, "memory", "set", entry.id, "--pin")
    assert r.exit_code == 1
    (line,) = r.output.strip().splitlines()
    assert "Hermes memory file" in line and "allowed: --importance" in line
    assert ws.memory_md.read_bytes() == before
