"""The /dreaming chat command: replies and config writes."""

from __future__ import annotations

from memcore.promotion.commands import handle_dreaming
from memcore.workspace.core import Workspace

GUIDE = """Modes:
- off: disable automatic short-term to long-term promotion.
- core: cadence=0 3 * * *; minScore=0.75, minRecallCount=3, minUniqueQueries=2.
- rem: cadence=0 */6 * * *; minScore=0.85, minRecallCount=4, minUniqueQueries=3.
- deep: cadence=0 */12 * * *; minScore=0.8, minRecallCount=3, minUniqueQueries=3."""


def test_status_shows_block_and_writes_nothing(ws: Workspace) -> None:
    ws.config_path.write_text('[dreaming]\nmode = "deep"\ntimezone = "America/Los_Angeles"\n')
    before = ws.config_path.read_text()
    out = handle_dreaming(ws, "/dreaming status")
    assert out == (
        "Dreaming status:\n- mode: deep\n- cadence: 0 */12 * * * (America/Los_Angeles)\n"
        "- limit: 10\n- thresholds: minScore=0.8, minRecallCount=3, minUniqueQueries=3"
    )
    assert ws.config_path.read_text() == before


def test_off_shows_disabled_without_timezone(ws: Workspace) -> None:
    assert "- cadence: disabled\n" in handle_dreaming(ws, "status")


def test_set_mode_keeps_comments_and_siblings(ws: Workspace) -> None:
    ws.config_path.write_text(
        '# my settings\n[dreaming]\nmode = "off"  # keep me\nmin_score = 0.9\n'
    )
    out = handle_dreaming(ws, "/dreaming REM now please")
    assert out.startswith("Dreaming mode set to rem.\nWarning: ")  # nothing is recalled yet
    assert "\n\nDreaming status:\n- mode: rem\n" in out
    assert "minScore=0.9," in out  # overrides visible
    assert out.endswith(GUIDE)
    text = ws.config_path.read_text()
    assert text.startswith("# my settings\n") and "min_score = 0.9" in text
    assert 'mode = "rem"' in text


def test_help_and_unknown_words_show_usage_without_writing(ws: Workspace) -> None:
    for text in ("", "/dreaming", "help", "/dreaming modes", "/dreaming sideways"):
        out = handle_dreaming(ws, text)
        assert out.startswith(
            "Usage: /dreaming off|core|rem|deep\nUse /dreaming status for current settings.\n\n"
        )
        assert out.endswith(GUIDE)
    assert not ws.config_path.exists()


def test_invalid_config_is_reported_not_overwritten(ws: Workspace) -> None:
    ws.config_path.write_text('[dreaming]\nmode = "core"\nmin_score = 7\n')
    out = handle_dreaming(ws, "rem")
    assert "nothing changed" in out and "min_score" in out
    assert 'mode = "core"' in ws.config_path.read_text()
