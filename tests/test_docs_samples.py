"""Every console sample in the docs prints what the page shows.

The convention (docs/architecture.md repeats it for contributors):

- A fenced block marked ``console`` is a sample. Its lines that start with ``$ `` are commands;
  the lines after a command, up to the next command, are what it prints (stdout and stderr as
  a terminal shows them). A command ending in ``\\`` continues on the next line.
- A command is ``memcore …``, optionally fed by ``echo '…' |`` or ``printf '…' |`` (its stdin).
  Anything else in a console block fails the test: illustrations that cannot run here (the
  gateway, curl) go in ``text`` or ``bash`` blocks.
- The samples of one page run in order against one fresh copy of ``examples/workspace``, which
  is the current directory, as ``cp -r examples/workspace /tmp/demo && cd /tmp/demo`` would
  make it: the copy's real path is shown as ``/tmp/demo`` (and the project id derived from the
  path as the one of ``/tmp/demo``). Run ids and ISO timestamps compare equal whatever their
  value (see ``TIMESTAMP``). Nothing else is normalised. The samples run at one fixed moment
  (``MEMCORE_NOW``, see ``SAMPLE_NOW``), because promotion scores decay with the date.
- An output line that is only ``…`` stands for any number of lines: for the parts of an output
  that depend on the date. The rewrite below leaves a sample that still matches as it is.
- A sample must exit 0, unless its output ends with an ``Error: …`` line; then it must exit
  with the code given in the page as ``(exit N)`` on the line after it, if given, else non-zero.

``MEMCORE_UPDATE_DOCS=1 python -m pytest tests/test_docs_samples.py`` rewrites each sample's
output with what the command prints now (after a CLI change), keeping the commands.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import invoke

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "workspace"
SHOWN_ROOT = "/tmp/demo"
#: The samples' clock (``MEMCORE_NOW``): the scores of recalls decay with the date, so the pages
#: show the outputs of one fixed moment, not of the day the suite runs.
SAMPLE_NOW = "2026-12-01T21:00:00Z"
FENCE = re.compile(r"^```console[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
EXIT_LINE = re.compile(r"^\(exit (\d+)\)$")
#: An output line that is only this stands for any number of lines (output that depends on
#: the date, e.g. which sessions have been idle long enough for their raw tool traffic).
ELIDED = "…"
#: Run ids and ISO timestamps: compared as equal whatever their value (they name the moment the
#: sample ran, or are random), so a page can show `memcore dream history`, `undo` and a session
#: dreaming report.
TIMESTAMP = re.compile(
    r"\d{8}T\d{6}Z-[0-9a-f]{4}"  # dream run ids
    r"|(?<=session dream )[0-9a-f]{12}"  # session dreaming run ids
    r"|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?"
)


@dataclass
class Sample:
    command: str  # as written, continuation lines joined
    raw: list[str]  # the command's lines as written (with "$ " and "\")
    expected: list[str] = field(default_factory=list)


def doc_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [f for f in files if FENCE.search(f.read_text(encoding="utf-8"))]


def parse_block(body: str) -> list[Sample]:
    samples: list[Sample] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            raw = [line]
            cmd = line[2:]
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                raw.append(lines[i])
                cmd = cmd[:-1].rstrip() + " " + lines[i].strip()
            samples.append(Sample(cmd.strip(), raw))
        elif samples:
            samples[-1].expected.append(line)
        else:
            raise AssertionError(f"console block does not start with a `$ ` command: {line!r}")
        i += 1
    for s in samples:
        while s.expected and not s.expected[-1].strip():
            s.expected.pop()
    return samples


def split_command(command: str) -> tuple[list[str], str | None]:
    """``memcore`` arguments and the text piped into it (or None)."""
    words = shlex.split(command, comments=True)
    stdin = None
    if "|" in words:
        bar = words.index("|")
        feeder, words = words[:bar], words[bar + 1 :]
        if len(feeder) != 2 or feeder[0] not in ("echo", "printf"):
            raise AssertionError(f"only `echo '…' |` or `printf '…' |` may feed memcore: {command}")
        text = feeder[1]
        stdin = text.encode().decode("unicode_escape") if feeder[0] == "printf" else text + "\n"
    if not words or words[0] != "memcore":
        raise AssertionError(f"a console sample runs memcore, not {command!r}; use a text block")
    return words[1:], stdin


def normalise(text: str, root: Path) -> list[str]:
    from memcore.sessions.settings import project_id
    from memcore.workspace.core import Workspace

    real_id = project_id(Workspace(root))
    shown_id = project_id(Workspace(Path(SHOWN_ROOT)))
    text = text.replace(str(root.resolve()), SHOWN_ROOT).replace(str(root), SHOWN_ROOT)
    text = text.replace(real_id, shown_id)
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def run_sample(sample: Sample, root: Path, env: dict[str, str]) -> tuple[int, list[str]]:
    args, stdin = split_command(sample.command)
    result = invoke(None, *args, input=stdin, env=env, prog_name="memcore", terminal_width=80)
    return result.exit_code, normalise(result.output, root)


def _matches(expected: list[str], actual: list[str]) -> bool:
    """Line by line; an expected line ``…`` stands for any number of actual lines."""
    if not expected:
        return not actual
    if expected[0] == ELIDED:
        return any(_matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and _matches(expected[1:], actual[1:])


def _masked(lines: list[str]) -> list[str]:
    return [TIMESTAMP.sub("<time>", x) for x in lines]


def check_exit(sample: Sample, code: int, output: list[str]) -> str | None:
    wanted = next((EXIT_LINE.match(x) for x in sample.expected if EXIT_LINE.match(x)), None)
    shown = [x for x in output if x.strip()]
    if shown and shown[-1].startswith("Error:"):
        if code == 0:
            return "prints an Error: line but exits 0"
        if wanted and int(wanted.group(1)) != code:
            return f"exits {code}, the page says {wanted.group(1)}"
        return None
    if code != 0:
        return f"exits {code} (only a sample whose output ends with an Error: line may)"
    return None


@pytest.mark.parametrize("doc", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_console_samples_print_what_the_page_shows(
    doc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "demo"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("*.sqlite*", "*.lock"))
    monkeypatch.chdir(root)
    monkeypatch.delenv("MEMCORE_WORKSPACE", raising=False)
    env = {"MEMCORE_USER_DIR": str(tmp_path / "user"), "COLUMNS": "80", "MEMCORE_NOW": SAMPLE_NOW}
    text = doc.read_text(encoding="utf-8")
    update = os.environ.get("MEMCORE_UPDATE_DOCS") == "1"
    problems: list[str] = []
    new_text, pos = [], 0
    for m in FENCE.finditer(text):
        samples = parse_block(m.group(1))
        assert samples, f"{doc.name}: empty console block"
        rendered: list[str] = []
        for s in samples:
            code, out = run_sample(s, root, env)
            expected = [x for x in s.expected if not EXIT_LINE.match(x)]
            exit_note = [x for x in s.expected if EXIT_LINE.match(x)]
            if update:
                if _matches(_masked(expected), _masked(out)):
                    out = expected  # unchanged: keep the page's run ids, times and elisions
                rendered += [*s.raw, *out, *([f"(exit {code})"] if code and exit_note else [])]
                continue
            problem = check_exit(s, code, out)
            if problem:
                problems.append(f"`{s.command}` {problem}:\n" + "\n".join(out))
            if not _matches(_masked(expected), _masked(out)):
                diff = difflib.unified_diff(expected, out, "page", "actual", lineterm="")
                problems.append(f"`{s.command}` prints something else:\n" + "\n".join(diff))
        if update:
            new_text += [text[pos : m.start(1)], "\n".join(rendered) + "\n"]
            pos = m.end(1)
    if update:
        doc.write_text("".join(new_text) + text[pos:], encoding="utf-8")
        return
    rel = doc.relative_to(ROOT)
    assert not problems, f"{rel} (MEMCORE_UPDATE_DOCS=1 rewrites the outputs):\n\n" + "\n\n".join(
        problems
    )


def test_sample_parser_reads_commands_outputs_and_pipes() -> None:
    block = "$ memcore dream \\\n  --only merge\nMerges (1):\n\n$ echo '[1]' | memcore x\nok\n"
    samples = parse_block(block)
    assert [s.command for s in samples] == ["memcore dream --only merge", "echo '[1]' | memcore x"]
    assert samples[0].expected == ["Merges (1):"]
    assert split_command(samples[1].command) == (["x"], "[1]\n")
    assert _matches(["a", ELIDED, "d"], ["a", "b", "c", "d"]) and _matches(["a", ELIDED], ["a"])
    assert not _matches(["a", ELIDED, "d"], ["a", "b", "c"])
    assert _masked(["20261201T092440Z-16ac  2026-12-01T09:24:40.043Z  dream/auto"]) == [
        "<time>  <time>  dream/auto"
    ]
    with pytest.raises(AssertionError, match="use a text block"):
        split_command("curl -s http://127.0.0.1:8787/healthz")


def _tour_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tour = readme.split("## A 5-minute tour", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in tour.splitlines() if line.startswith("memcore ")]


@pytest.mark.parametrize("line", _tour_commands())
def test_readme_tour_names_real_commands_and_options(line: str) -> None:
    """The README's tour is a list, not a sample; its commands must still parse."""
    import click

    from memcore.cli import cli

    args = shlex.split(line, comments=True)[1:]
    command: click.Command = cli
    ctx = cli.make_context("memcore", [], resilient_parsing=True)
    while isinstance(command, click.Group) and args:
        sub = command.get_command(ctx, args[0])  # the root loads its commands lazily
        if sub is None:
            break
        args.pop(0)
        command = sub
        ctx = command.make_context(command.name, [], parent=ctx, resilient_parsing=True)
    assert ctx.parent is not None, f"`{line}` names no memcore command"
    command.make_context(command.name or "", args, parent=ctx.parent)  # raises on a bad option
