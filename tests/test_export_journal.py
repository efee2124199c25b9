"""``memcore export --apply`` is one journaled run: ``memcore history`` lists it and ``memcore
undo RUN`` takes it back exactly (files it created gone with the folders it made for them, files
it changed back byte for byte); a file memcore did not write is never overwritten unasked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcore.workspace.core import Workspace
from tests.conftest import invoke

MEMORY = "# Long-Term Memory\n\n- Deploys go out on Fridays.\n- Billing runs on Postgres 16.\n"


def tree(top: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under ``top``."""
    if not top.exists():
        return {}
    return {
        p.relative_to(top).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(top.rglob("*"))
    }


def export(ws: Workspace, target: str, out: Path, *extra: str) -> dict:
    r = invoke(ws, "export", "--to", target, str(out), "--apply", "--json", *extra)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def undo(ws: Workspace, run_id: str) -> dict:
    r = invoke(ws, "undo", run_id, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.mark.parametrize("target", ["agents-md", "cursor-rules", "claude-code", "codex"])
def test_an_export_into_a_new_folder_is_undone_to_nothing(
    ws: Workspace, tmp_path: Path, target: str
) -> None:
    ws.memory_md.write_text(MEMORY)
    parent = tmp_path / "home"
    parent.mkdir()
    out = parent / "new" / "project"
    res = export(ws, target, out)
    assert res["runId"] and all(f["action"] == "create" for f in res["files"])
    hist = invoke(ws, "history", "--json")
    (run,) = [r for r in json.loads(hist.stdout)["runs"] if r["runId"] == res["runId"]]
    assert (run["kind"], run["mode"], run["status"]) == ("export", "apply", "applied")
    assert sorted(run["files"]) == sorted(str(Path(f["path"]).absolute()) for f in res["files"])
    assert f"{res['runId']}" in invoke(ws, "history").output
    back = undo(ws, res["runId"])
    assert back["exact"] and str(parent / "new") in back["dirsRemoved"]
    assert tree(parent) == {}  # the files and the folders made for them are gone


def test_changed_files_come_back_byte_for_byte(ws: Workspace, tmp_path: Path) -> None:
    ws.memory_md.write_text(MEMORY)
    out = tmp_path / "app"
    out.mkdir()
    # a user's own AGENTS.md: CRLF, no final newline, non-ASCII
    (out / "AGENTS.md").write_bytes(b"# Agents\r\n\r\nUse pnpm \xe2\x80\x94 always.")
    # a user's own Claude Code index and topic file
    (out / "MEMORY.md").write_bytes(b"- [Style](style.md) \xe2\x80\x94 code style\n")
    (out / "style.md").write_bytes(b"---\nname: Style\ndescription: d\ntype: user\n---\nTabs.\n")
    before = tree(out)
    for target in ("agents-md", "claude-code"):
        refused = invoke(ws, "export", "--to", target, str(out), "--apply")
        assert refused.exit_code == 1
        (line,) = refused.output.strip().splitlines()
        assert "has no memcore section; --force appends one" in line and "nothing written" in line
    assert tree(out) == before
    assert all(
        r["kind"] != "export" for r in json.loads(invoke(ws, "history", "--json").stdout)["runs"]
    )
    a = export(ws, "agents-md", out, "--force")
    c = export(ws, "claude-code", out, "--force")
    agents = (out / "AGENTS.md").read_bytes()
    assert agents.startswith(before["AGENTS.md"])  # kept, the section appended
    assert b"Deploys go out on Fridays." in agents
    index = (out / "MEMORY.md").read_bytes()
    assert index.startswith(before["MEMORY.md"]) and b"(memcore-memory.md)" in index
    assert (out / "style.md").read_bytes() == before["style.md"]
    # a second export replaces only memcore's section, without --force
    ws.memory_md.write_text(MEMORY + "- The VPN is wg0.\n")
    c2 = export(ws, "claude-code", out)
    assert [f["action"] for f in c2["files"]] == ["unchanged", "update"]
    undo(ws, c2["runId"])
    assert (out / "MEMORY.md").read_bytes() == index
    undo(ws, c["runId"])
    undo(ws, a["runId"])
    assert tree(out) == before


def test_an_export_memcore_wrote_is_updated_and_an_edited_one_is_not(
    ws: Workspace, tmp_path: Path
) -> None:
    ws.memory_md.write_text(MEMORY)
    out = tmp_path / "codex"
    first = export(ws, "codex", out)
    summary = out / "memory_summary.md"
    exported = summary.read_bytes()
    assert exported.startswith(b"v1\n")
    ws.memory_md.write_text(MEMORY + "- The VPN is wg0.\n")
    second = export(ws, "codex", out)  # its own summary (no stamp in it): updated, not refused
    assert {f["action"] for f in second["files"]} == {"update"}
    assert b"wg0" in summary.read_bytes()
    undo(ws, second["runId"])
    assert summary.read_bytes() == exported
    summary.write_bytes(exported + b"- added by Codex\n")  # Codex edits it: no longer memcore's
    refused = invoke(ws, "export", "--to", "codex", str(out), "--apply")
    assert refused.exit_code == 1 and "memcore did not write it" in refused.output
    stuck = invoke(ws, "undo", first["runId"])
    assert stuck.exit_code != 0 and "changed after the run" in stuck.output
    assert summary.read_bytes() == exported + b"- added by Codex\n"  # nothing changed
