"""Bad input in another tool's files: one line naming the file, the key and what is allowed,
in ``memcore status`` (JSON and text), and not a byte of any file rewritten."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import invoke


def _files(top: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(top.rglob("*")) if p.is_file()}


def openclaw_bad_json(tmp: Path) -> tuple[Path, Path, str]:
    root = tmp / ".openclaw" / "workspace"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "2026-11-28.md").write_text("- x\n")
    cfg = tmp / ".openclaw" / "openclaw.json"
    cfg.write_text('{"plugins": {"entries": {"memory-core": {"config": [1, 2\n')
    return root, cfg, "not valid JSON"


def openclaw_unknown_mode(tmp: Path) -> tuple[Path, Path, str]:
    root, cfg, _ = openclaw_bad_json(tmp)
    cfg.write_text(
        '{"plugins": {"entries": {"memory-core": {"config": {"dreaming": '
        '{"mode": "nightly", "enabled": "yes"}}}}}}\n'
    )
    return root, cfg, "dreaming.mode = 'nightly'"


def front_matter_not_yaml(tmp: Path) -> tuple[Path, Path, str]:
    root = tmp / ".claude" / "projects" / "-home-me-app" / "memory"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text("- [Bad](bad.md) — broken\n")
    bad = root / "bad.md"
    bad.write_text("---\nname: [unclosed\ndescription: d\n---\nBody.\n")
    return root, bad, "front matter is not YAML"


def codex_without_v1(tmp: Path) -> tuple[Path, Path, str]:
    root = tmp / ".codex" / "memories"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Task Group: api\n\n- Use pnpm.\n")
    summary = root / "memory_summary.md"
    summary.write_text("v2\n- prefers pnpm\n")
    return root, summary, "first line is 'v2'"


def hermes_over_limit(tmp: Path) -> tuple[Path, Path, str]:
    root = tmp / ".hermes" / "memories"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text("A fact.\n§\nAnother.\n")
    user = root / "USER.md"
    user.write_text("Name is Ana.\n§\n" + "z" * 1400 + "\n")
    return root, user, "over Hermes' limit of 1375"


CASES: dict[str, tuple[Callable[[Path], tuple[Path, Path, str]], str]] = {
    "openclaw.json that does not parse": (openclaw_bad_json, "allowed: JSON with"),
    "openclaw.json with unknown values": (openclaw_unknown_mode, "allowed: off, core, rem, deep"),
    "front matter that is not YAML": (front_matter_not_yaml, "allowed: YAML `key: value`"),
    "Codex summary without v1": (codex_without_v1, "allowed: exactly 'v1'"),
    "Hermes file over its limit": (hermes_over_limit, "allowed: at most 1375 characters"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_one_line_naming_file_key_and_allowed(tmp_path: Path, case: str) -> None:
    build, allowed = CASES[case]
    root, bad, key = build(tmp_path)
    before = _files(tmp_path)
    out = invoke(root, "status", "--json")
    assert out.exit_code == 0, out.output
    hits = [w for w in json.loads(out.stdout)["warnings"] if key in w]
    assert len(hits) == 1, json.loads(out.stdout)["warnings"]
    (line,) = hits
    assert line.startswith(str(bad)) and allowed in line and "\n" not in line
    text = invoke(root, "status")
    assert text.exit_code == 0, text.output
    assert any(line in shown for shown in text.output.splitlines())
    after = {p: b for p, b in _files(tmp_path).items() if p in before}
    assert after == before  # nothing rewritten (memcore's own folder is elsewhere)
