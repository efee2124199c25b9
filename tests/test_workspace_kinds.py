"""Workspace kinds, detected from what is on disk: each adapter's files, entries and warnings,
memcore's own folder out of other tools' folders, openclaw.json's dreaming settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcore.errors import InputError
from memcore.recall import store as recall
from memcore.workspace.config import dreaming_settings, load_config
from memcore.workspace.core import resolve_workspace
from memcore.workspace.kinds import detect, kind_of, state_dir
from memcore.workspace.layouts import describe
from memcore.workspace.layouts.claude_code import read_topic, split_front_matter, write_topic
from memcore.workspace.layouts.hermes import append_entry
from tests.conftest import invoke

TOPIC = (
    "---\n"
    "name: Deploys\n"
    "description:   how we ship   # spacing and comments kept\n"
    "type: project\n"
    "---\n"
    "We deploy with blue/green on Fridays.\n"
)


def claude_folder(home: Path) -> Path:
    root = home / ".claude" / "projects" / "-home-me-app" / "memory"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text("- [Deploys](deploys.md) — how we ship\n")
    (root / "deploys.md").write_text(TOPIC)
    return root


def invoke_json(root: Path, *args: str) -> dict:
    out = invoke(root, *args, "--json")
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def test_claude_code_folder_is_detected_and_memcore_keeps_out_of_it(tmp_path: Path) -> None:
    root = claude_folder(tmp_path)
    ws = resolve_workspace(root)
    assert kind_of(root).name == "claude-code"
    assert ws.dreams_dir == state_dir(root) and not ws.dreams_dir.is_relative_to(root)
    st = invoke_json(root, "status")
    assert st["kind"] == "claude-code" and st["entries"] == 1
    assert st["reads"] == ["MEMORY.md (index)", "deploys.md"]
    assert all(str(state_dir(root)) in w for w in st["writes"])
    recall.record_recalls(ws, "q", [], now=None)  # opening memcore's files creates no file here
    assert sorted(p.name for p in root.iterdir()) == ["MEMORY.md", "deploys.md"]
    (entry,) = describe(ws).entries
    assert entry.metadata == {"name": "Deploys", "description": "how we ship", "type": "project"}
    assert entry.text == "We deploy with blue/green on Fridays."


def test_topic_front_matter_survives_byte_for_byte(tmp_path: Path) -> None:
    path = claude_folder(tmp_path) / "deploys.md"
    write_topic(path, "We deploy on Tuesdays now.\n")
    text = path.read_text()
    assert text == TOPIC.replace(
        "We deploy with blue/green on Fridays.", "We deploy on Tuesdays now."
    )
    meta, body = read_topic(path)
    write_topic(path, body, dict(meta))  # the same metadata: still the same bytes
    assert path.read_text() == text
    write_topic(path, body, {**meta, "type": "feedback"})
    assert read_topic(path)[0]["type"] == "feedback"
    new = path.parent / "new.md"
    write_topic(new, "Body.\n", {"name": "N", "description": "d", "type": "user"})
    front, body = split_front_matter(new.read_text())
    assert front.startswith("---\n") and body == "Body.\n"


def test_front_matter_that_is_not_yaml_is_one_warning_and_left_alone(tmp_path: Path) -> None:
    root = claude_folder(tmp_path)
    bad = root / "bad.md"
    bad.write_text("---\nname: [broken\n---\nbody\n")
    before = bad.read_bytes()
    st = invoke_json(root, "status")
    (warning,) = [w for w in st["warnings"] if "bad.md" in w]
    assert "front matter is not YAML" in warning and "\n" not in warning
    assert bad.read_bytes() == before
    with pytest.raises(InputError, match=r"bad\.md: front matter is not YAML"):
        read_topic(bad)


def test_project_with_only_claude_md_has_its_entries(tmp_path: Path) -> None:
    root = tmp_path / "app"
    root.mkdir()
    (root / "CLAUDE.md").write_text("# Conventions\n\n- Use pnpm.\n- Tests run with vitest.\n")
    assert detect(root).name == "claude-code"
    st = invoke_json(root, "status")
    assert st["entries"] == 2
    assert "CLAUDE.md (long-term memory, read-only)" in st["reads"]
    assert all(e.read_only for e in describe(resolve_workspace(root)).entries)
    assert sorted(p.name for p in root.iterdir()) == ["CLAUDE.md"]


def test_codex_summary_first_line_is_checked_and_kept(tmp_path: Path) -> None:
    root = tmp_path / ".codex" / "memories"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Task Group: api\n\n## User preferences\n\n- Use pnpm.\n")
    (root / "memory_summary.md").write_text("- prefers pnpm\n")
    st = invoke_json(root, "status")
    assert st["kind"] == "codex"
    (warning,) = st["warnings"]
    assert "memory_summary.md: first line is '- prefers pnpm'; allowed: exactly 'v1'" in warning
    assert (root / "memory_summary.md").read_text() == "- prefers pnpm\n"
    (root / "memory_summary.md").write_text("v1\n- prefers pnpm\n")
    st = invoke_json(root, "status")
    assert st["warnings"] == [] and st["entries"] == 2


def test_hermes_entries_and_limits(tmp_path: Path) -> None:
    root = tmp_path / ".hermes" / "memories"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text("The NAS backs up nightly.\n§\nVPN is wg0.\n")
    (root / "USER.md").write_text("Name is Ana.\n")
    st = invoke_json(root, "status")
    assert st["kind"] == "hermes" and st["entries"] == 3
    assert "MEMORY.md (40/2200 characters)" in st["reads"]
    append_entry(root / "USER.md", "Prefers   short answers.")
    assert (root / "USER.md").read_text() == "Name is Ana.\n§\nPrefers short answers.\n"
    before = (root / "USER.md").read_bytes()
    with pytest.raises(InputError, match=r"USER.md: .*allowed: at most 1375 .*nothing written"):
        append_entry(root / "USER.md", "x" * 1400)
    assert (root / "USER.md").read_bytes() == before
    (root / "MEMORY.md").write_text("y" * 2300)
    st = invoke_json(root, "status")
    assert any("over Hermes' limit of 2200" in w for w in st["warnings"])


def openclaw_home(tmp_path: Path, dreaming: str) -> Path:
    home = tmp_path / ".openclaw"
    ws = home / "workspace"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-11-28-0755.md").write_text("- x\n")
    (home / "openclaw.json").write_text(
        '{\n  // written by OpenClaw\n  "plugins": {"entries": {"memory-core": '
        f'{{"config": {{"dreaming": {dreaming}}}}}}}}},\n}}\n'
    )
    return ws


def test_openclaw_json_gives_the_dreaming_settings_and_status_says_which_wins(
    tmp_path: Path,
) -> None:
    root = openclaw_home(
        tmp_path, '{"mode": "rem", "timezone": "Europe/Berlin", "limit": "4", "minScore": 0.6}'
    )
    ws = resolve_workspace(root)
    assert ws.dreams_dir == root / "memory" / ".dreams"  # OpenClaw's own layout
    s = dreaming_settings(load_config(ws))
    assert (s.mode, s.timezone, s.limit, s.min_score) == ("rem", "Europe/Berlin", 4, 0.6)
    st = invoke_json(root, "status")
    assert st["kind"] == "openclaw"
    assert st["config"]["dreamingFrom"].endswith("openclaw.json")
    (warning,) = st["warnings"]
    assert "both memcore (mode rem) and OpenClaw" in warning
    # memcore.toml's [dreaming] wins once it exists: one scheduler
    assert invoke(root, "dreaming", "off").exit_code == 0
    st = invoke_json(root, "status")
    assert st["config"]["dreamingFrom"] == "memcore.toml"
    assert "memcore.toml [dreaming] wins" in st["config"]["ignored"]
    assert st["warnings"] == []


@pytest.mark.parametrize(
    ("dreaming", "expected"),
    [
        ('{"mode": "sometimes"}', "dreaming.mode = 'sometimes' is not a mode; allowed: off, core"),
        ('{"mode": "core", "minScore": 7}', "dreaming.minScore = 7 is not allowed; allowed: a"),
        ('{"mode": "core", "timezone": "Mars/Olympus"}', "is not a known IANA timezone"),
        ("[1, 2", "not valid JSON"),
    ],
)
def test_bad_openclaw_json_is_one_warning_naming_file_and_key(
    tmp_path: Path, dreaming: str, expected: str
) -> None:
    root = openclaw_home(tmp_path, dreaming)
    config = tmp_path / ".openclaw" / "openclaw.json"
    before = config.read_bytes()
    st = invoke_json(root, "status")
    hits = [w for w in st["warnings"] if expected in w]
    assert hits and str(config) in hits[0] and "\n" not in hits[0]
    assert config.read_bytes() == before


def test_workspace_kind_overrides_detection_and_a_bad_one_is_one_line(tmp_path: Path) -> None:
    root = claude_folder(tmp_path)
    (root / "memcore.toml").write_text('[workspace]\nkind = "memcore"\n')
    assert kind_of(root).name == "memcore"
    assert resolve_workspace(root).state is None
    (root / "memcore.toml").write_text('[workspace]\nkind = "claude"\n')
    out = invoke(root, "status")
    assert out.exit_code != 0
    (line,) = out.output.strip().splitlines()
    assert "memcore.toml [workspace] kind = 'claude' is not a workspace kind; allowed:" in line
    assert "claude-code, codex, hermes" in line


def test_a_kept_kind_follows_every_change_it_depends_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kind_of keeps its answer per folder and asks again once a file it depends on changed
    (created, removed, rewritten; the folder's own mtime set apart each time, as two changes
    in different mtime ticks would)."""
    import os

    from memcore.workspace import kinds

    monkeypatch.setattr(kinds, "_KIND_RACY_NS", 0)  # files of this test are seconds old
    root = tmp_path / "agent"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Long-Term Memory\n")
    tick = [1_000_000_000]

    def moved_on() -> None:  # the folder's mtime after a change, one tick later
        tick[0] += 10
        os.utime(root, (tick[0], tick[0]))

    moved_on()
    assert kind_of(root).name == "memcore"
    assert str(root) in kinds._kinds  # kept
    (root / "AGENTS.md").write_text("# Agent\n")
    moved_on()
    assert kind_of(root).name == "openclaw"
    (root / "AGENTS.md").unlink()
    moved_on()
    assert kind_of(root).name == "memcore"
    (root / "memcore.toml").write_text('[workspace]\nkind = "codex"\n')
    moved_on()
    assert kind_of(root).name == "codex"
    (root / "memcore.toml").write_text('[workspace]\nkind = "hermes"\n')  # rewritten in place
    assert kind_of(root).name == "hermes"
    (root / "memcore.toml").unlink()
    moved_on()
    (root / "USER.md").write_text("- likes tea\n")
    (root / "MEMORY.md").write_text("- one\n§\n- two\n")  # MEMORY.md's entries decide
    moved_on()
    assert kind_of(root).name == "hermes"
