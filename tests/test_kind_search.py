"""Search covers each kind's long-term files: a Claude Code folder's topic files (front matter
included) and CLAUDE.md files, Codex's memory_summary.md, Hermes' USER.md; the paths and lines
of the hits are the ones ``memory_get`` reads, through the CLI and the MCP server."""

from __future__ import annotations

import json
from pathlib import Path

from memcore.workspace.core import Workspace, resolve_workspace
from memcore.workspace.kinds import state_dir
from memcore.workspace.layouts import indexed_files
from tests.conftest import invoke
from tests.test_mcp import call_all, payload

TOPIC = (
    "---\n"
    "name: Deploys\n"
    "description: how we ship releases   # kept as written\n"
    "type: project\n"
    "---\n"
    "We deploy with blue/green on Fridays.\n"
    "\n"
    "**Why:** the kubernetes cluster drains slowly.\n"
)


def claude_folder(home: Path) -> Path:
    root = home / ".claude" / "projects" / "-home-me-app" / "memory"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text("- [Deploys](deploys.md) — how we ship\n")
    (root / "deploys.md").write_text(TOPIC)
    (root / "feedback_tests.md").write_text(
        "---\nname: Tests\ndescription: test style\ntype: feedback\n---\n"
        "Integration tests hit a real database, never mocks.\n"
    )
    return root


def search_json(root: Path, query: str) -> list[dict]:
    out = invoke(root, "memory", "search", query, "--json")
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)["results"]


def test_topic_files_are_searched_with_the_lines_memory_get_reads(tmp_path: Path) -> None:
    root = claude_folder(tmp_path)
    before = {p.name: p.read_bytes() for p in root.iterdir()}
    top = search_json(root, "kubernetes cluster drains")[0]
    assert (top["path"], top["startLine"], top["endLine"]) == ("deploys.md", 8, 8)
    assert top["snippet"] == "**Why:** the kubernetes cluster drains slowly."
    meta = search_json(root, "ship releases")[0]
    assert (meta["path"], meta["startLine"], meta["endLine"]) == ("deploys.md", 2, 4)
    assert "description: how we ship releases" in meta["snippet"]
    other = search_json(root, "real database mocks")[0]
    assert other["path"] == "feedback_tests.md" and other["startLine"] == 6
    got = invoke(root, "memory", "status", "--json")
    assert got.exit_code == 0, got.output
    assert json.loads(got.stdout)["index"]["files"] == 3  # MEMORY.md and two topic files
    # the index lives in memcore's own folder; the Claude Code folder is untouched
    assert {p.name: p.read_bytes() for p in root.iterdir()} == before
    assert (state_dir(root) / "memcore.sqlite").is_file()


def test_an_edited_or_removed_topic_file_is_reindexed(tmp_path: Path) -> None:
    root = claude_folder(tmp_path)
    assert search_json(root, "kubernetes")[0]["path"] == "deploys.md"
    (root / "deploys.md").write_text(TOPIC.replace("kubernetes cluster", "nomad fleet"))
    assert all("kubernetes" not in r["snippet"] for r in search_json(root, "kubernetes"))
    assert search_json(root, "nomad fleet")[0]["path"] == "deploys.md"
    (root / "feedback_tests.md").unlink()
    assert all(r["path"] != "feedback_tests.md" for r in search_json(root, "database mocks"))


def test_claude_md_project_is_searched_and_never_written(tmp_path: Path) -> None:
    root = tmp_path / "app"
    (root / ".claude").mkdir(parents=True)
    (root / "CLAUDE.md").write_text("# Conventions\n\n- Use pnpm, never npm.\n")
    (root / ".claude" / "CLAUDE.md").write_text("# Local\n\n- The staging host is bravo.\n")
    (root / "README.md").write_text("# App\n\nThe pnpm workspace README.\n")
    ws = resolve_workspace(root)
    assert indexed_files(ws) == ["CLAUDE.md", ".claude/CLAUDE.md"]  # README.md is no topic
    hits = search_json(root, "pnpm")
    assert [(h["path"], h["startLine"]) for h in hits] == [("CLAUDE.md", 3)]
    assert search_json(root, "staging host")[0]["path"] == ".claude/CLAUDE.md"
    assert sorted(p.name for p in root.iterdir()) == [".claude", "CLAUDE.md", "README.md"]


def test_codex_summary_and_hermes_user_file_are_searched(tmp_path: Path) -> None:
    codex = tmp_path / ".codex" / "memories"
    codex.mkdir(parents=True)
    (codex / "MEMORY.md").write_text("# Task Group: api\n\n- Use pnpm.\n")
    (codex / "memory_summary.md").write_text("v1\n- prefers terse commit messages\n")
    hit = search_json(codex, "terse commit")[0]
    assert (hit["path"], hit["startLine"]) == ("memory_summary.md", 2)
    hermes = tmp_path / ".hermes" / "memories"
    hermes.mkdir(parents=True)
    (hermes / "MEMORY.md").write_text("The NAS backs up nightly.\n§\nVPN is wg0.\n")
    (hermes / "USER.md").write_text("Name is Ana.\n§\nPrefers short answers.\n")
    hit = search_json(hermes, "short answers")[0]
    assert (hit["path"], hit["startLine"], hit["snippet"]) == (
        "USER.md",
        3,
        "Prefers short answers.",
    )
    vpn = search_json(hermes, "vpn wg0")[0]  # one entry per chunk, § apart
    assert (vpn["path"], vpn["startLine"], vpn["endLine"]) == ("MEMORY.md", 3, 3)


def test_mcp_search_then_get_reads_the_topic_lines(tmp_path: Path) -> None:
    root = claude_folder(tmp_path)
    ws = Workspace(root)
    _, (found,) = call_all(ws, [("memory_search", {"query": "kubernetes drains"})])
    top = payload(found)["results"][0]
    assert (top["path"], top["startLine"]) == ("deploys.md", 8)
    _, (got,) = call_all(
        ws,
        [
            (
                "memory_get",
                {"path": top["path"], "start_line": top["startLine"], "end_line": top["endLine"]},
            )
        ],
    )
    assert payload(got)["text"] == top["snippet"]


def test_gateway_search_finds_topic_text(tmp_path: Path) -> None:
    from tests.test_gateway_helpers import gateway

    root = claude_folder(tmp_path)
    with gateway([Workspace(root)], scheduler=False) as (_, client, _served):
        res = client.post("/api/memories/search", json={"query": "kubernetes drains", "limit": 3})
        assert res.status_code == 200, res.text
    top = res.json()["results"][0]
    assert (top["path"], top["startLine"], top["endLine"]) == ("deploys.md", 8, 8)
    assert sorted(p.name for p in root.iterdir()) == [
        "MEMORY.md",
        "deploys.md",
        "feedback_tests.md",
    ]
