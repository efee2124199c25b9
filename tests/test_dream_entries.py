"""MEMORY.md entries: ids, sections, markers, line ranges, byte-preserving edits, odd input."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memcore.workspace.entries import (
    body_of,
    entries_for_lines,
    entry_raw,
    insert_at,
    marker_attrs_for,
    parse,
    render,
)
from memcore.workspace.markdown import promoted_entry_id, text_entry_id

DOC = """# Long-Term Memory

Intro paragraph that spans
two lines.

## Preferences

- Dark mode everywhere.
- Short answers,
  continued on an indented line.
  - a nested bullet stays with its parent
<!-- memcore:entry id="abc123" pinned="true" type="decision" scope="project" -->
- Never force-push to main.

## Code

```
not an entry heading
# inside a fence
```

<!-- memcore:entry key="memory:memory/2026-04-01.md:10:12" -->
- Promoted thing [score=0.812 recalls=4 avg=0.903 source=memory/2026-04-01.md:10-12]
"""


def test_parse_entries_sections_ids_and_lines() -> None:
    doc = parse(DOC)
    texts = [e.text for e in doc.entries]
    assert texts[0] == "Intro paragraph that spans two lines."
    assert texts[1] == "Dark mode everywhere."
    assert texts[2].startswith("Short answers, continued on an indented line. - a nested")
    assert texts[3] == "Never force-push to main."
    assert texts[-1] == "Promoted thing"
    e = doc.entries[3]
    assert e.id == "abc123" and e.id_source == "marker" and e.pinned is True
    assert e.attrs["type"] == "decision" and e.attrs["scope"] == "project"
    assert e.section == "Preferences"
    assert (e.start_line, e.end_line) == (13, 13)  # body line; the marker is line 12
    assert doc.entries[1].id == text_entry_id("Dark mode everywhere.")
    last = doc.entries[-1]
    assert last.id == promoted_entry_id("memory:memory/2026-04-01.md:10:12")
    assert last.promotion_score == 0.812
    assert doc.entries[0].section == "Long-Term Memory"
    assert doc.warnings == []


def test_render_keeps_every_other_byte() -> None:
    doc = parse(DOC)
    assert render(doc, {}) == DOC
    out = render(doc, {1: None})
    assert out == DOC.replace("- Dark mode everywhere.\n", "")
    e = doc.entries[1]
    new = entry_raw("- Dark mode in every editor.\n", marker_attrs_for(e, pinned="true"))
    out = render(doc, {1: new})
    assert (
        f'<!-- memcore:entry id="{e.id}" pinned="true" -->\n- Dark mode in every editor.\n' in out
    )
    assert out.replace(new, e.raw) == DOC
    assert parse(out).entries[1].id == e.id  # the marker keeps the id


def test_removing_a_paragraph_between_blank_lines_leaves_one_gap() -> None:
    text = "# T\n\nfirst para\n\nsecond para\n\nthird para\n"
    doc = parse(text)
    assert [e.text for e in doc.entries] == ["first para", "second para", "third para"]
    assert render(doc, {1: None}) == "# T\n\nfirst para\n\nthird para\n"


def test_crlf_and_missing_final_newline_survive() -> None:
    text = "# T\r\n\r\n- one\r\n- two"
    doc = parse(text)
    assert [e.text for e in doc.entries] == ["one", "two"]
    assert render(doc, {}) == text
    assert render(doc, {0: None}) == "# T\r\n\r\n- two"


def test_broken_duplicated_and_orphan_markers_warn() -> None:
    text = (
        "# T\n"
        '<!-- memcore:entry id="a1" -->\n'
        '<!-- memcore:entry id="a2" -->\n'
        "- first\n"
        '<!-- memcore:entry id="b1"\n'
        "- second\n"
        '<!-- memcore:entry id="c1" -->\n'
        "\n"
        "- third\n"
        '<!-- memcore:entry id="bad id!" color="red" pinned="maybe" type="gossip" -->\n'
        "- fourth\n"
    )
    doc = parse(text)
    w = "\n".join(doc.warnings)
    assert "marker followed by another marker" in w
    assert "broken memcore marker" in w
    assert "not directly above an entry" in w
    assert "color='red' is unknown" in w
    assert "pinned='maybe' is invalid" in w and "type='gossip' is invalid" in w
    assert "id='bad id!' is invalid" in w
    ids = [e.id for e in doc.entries]
    assert ids[0] == "a2"
    assert doc.entries[-1].attrs == {}
    assert doc.entries[-1].id == text_entry_id("fourth")
    assert render(doc, {}) == text


def test_same_id_twice_gets_a_distinct_id_and_a_warning() -> None:
    text = (
        '<!-- memcore:entry id="x1" -->\n- one\n<!-- memcore:entry id="x1" -->\n- two\n'
        "- same\n- same\n"
    )
    doc = parse(text)
    ids = [e.id for e in doc.entries]
    assert ids[0] == "x1" and ids[1] == "x1-2"
    assert ids[2] != ids[3] and ids[3] == ids[2] + "-2"
    assert any("used by another entry" in w for w in doc.warnings)
    assert len(set(ids)) == 4


def test_empty_and_heading_only_files() -> None:
    assert parse("").entries == []
    assert parse("# Long-Term Memory\n").entries == []
    assert render(parse(""), {}) == ""


def test_non_english_and_mixed_script_entries() -> None:
    text = (
        "# Память\n\n- Пользователь предпочитает тёмную тему.\n- 用户喜欢用中文回答问题。\n"
        "- Mixed: café ☕ 東京 ok\n"
    )
    doc = parse(text)
    assert [e.text for e in doc.entries] == [
        "Пользователь предпочитает тёмную тему.",
        "用户喜欢用中文回答问题。",
        "Mixed: café ☕ 東京 ok",
    ]
    assert doc.entries[0].section == "Память"
    assert render(doc, {1: None}) == text.replace("- 用户喜欢用中文回答问题。\n", "")


def test_front_matter_is_not_an_entry() -> None:
    doc = parse("---\ntitle: x\n---\n# T\n- one\n")
    assert [e.text for e in doc.entries] == ["one"]


def test_lines_to_entries_and_insert() -> None:
    doc = parse(DOC)
    hit = entries_for_lines(doc, 8, 8)
    assert [e.text for e in hit] == ["Dark mode everywhere."]
    assert [e.id for e in entries_for_lines(doc, 10, 11)] == [doc.entries[2].id]
    assert insert_at("a\nb\n", 1, "x") == "a\nx\nb\n"
    assert insert_at("a", 5, "x\n") == "a\nx\n"
    assert body_of(doc.entries[3]) == "- Never force-push to main.\n"


_LINES = st.sampled_from(
    [
        "# Title",
        "## Section",
        "",
        "   ",
        "- bullet",
        "* star bullet",
        "1. numbered",
        "  indented continuation",
        "plain paragraph text",
        '<!-- memcore:entry id="x1" pinned="true" -->',
        '<!-- memcore:entry id="x1"',
        "<!-- openclaw-memory-promotion:memory:memory/2026-01-01.md:1:2 -->",
        "<!-- a comment -->",
        "```",
        "---",
        "- Пользователь 用户 café",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_LINES, max_size=30), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_parse_render_round_trip_and_removal_only_touches_the_entry(
    lines: list[str], eol: str, final_newline: bool
) -> None:
    text = eol.join(lines) + (eol if final_newline and lines else "")
    doc = parse(text)
    assert render(doc, {}) == text
    for i, e in enumerate(doc.entries):
        out = render(doc, {i: None})
        before, after = "".join(doc.lines[: e.start]), doc.lines[e.end :]
        if out != before + "".join(after):  # else one blank line after it went too
            assert not after[0].strip() and out == before + "".join(after[1:])
