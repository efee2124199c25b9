"""A long-lived process reuses its last scan of the workspace's files while inotify reports no
change in the folders it walked (memcore.search.watch): every change another process makes is
still found by the next search. Each test first shows the kept scan was in use, so the change
after it is seen through the watch, not through a scan that would have run anyway."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memcore.search.connections import IndexPool
from memcore.search.query import search
from memcore.workspace.core import Workspace

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")

OLD = time.time() - 3 * 86400  # notes written days ago (no re-hash of recent files)


def _old(path: Path) -> None:
    os.utime(path, (OLD, OLD))


def _workspace(ws: Workspace) -> None:
    for day in range(1, 6):
        note = ws.memory_dir / f"2026-10-0{day}.md"
        note.write_text(f"# Day {day}\n\n- The kafka cluster was checked on day {day}.\n")
        _old(note)
    ws.memory_md.write_text("# Long-Term Memory\n\n- Postgres runs on port 5432.\n")
    _old(ws.memory_md)


def _elsewhere(code: str) -> None:
    """Run ``code`` in another process (the change a search must notice)."""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def _paths(ws: Workspace, query: str, pool: IndexPool) -> list[str]:
    return [r["path"] for r in search(ws, query, record=False, pool=pool).results]


def _settle(ws: Workspace, pool: IndexPool) -> int:
    """Search until the watch serves a kept scan; the count of kept scans served."""
    before = pool.watch.kept_scans
    for _ in range(3):
        search(ws, "kafka", record=False, pool=pool)
    assert pool.watch.kept_scans > before  # the scan of every file was skipped
    return pool.watch.kept_scans


@pytest.fixture
def pool() -> Iterator[IndexPool]:
    p = _watched_pool()
    yield p
    p.close()


def _watched_pool() -> IndexPool:
    p = IndexPool()
    if not p.watch.available:  # made on first use; the only failure is the per-user limit
        p.close()
        pytest.skip("no inotify instance to be had (fs.inotify.max_user_instances)")
    return p


def test_a_note_edited_in_place_by_another_process_is_found(ws: Workspace, pool: IndexPool) -> None:
    _workspace(ws)
    _settle(ws, pool)
    note = ws.memory_dir / "2026-10-03.md"
    _elsewhere(f"open({str(note)!r}, 'a').write('- Zanzibar replica added.\\n')")
    assert _paths(ws, "zanzibar", pool) == ["memory/2026-10-03.md"]
    # the same size, the bytes overwritten in place
    _old(note)
    _settle(ws, pool)
    _elsewhere(
        f"f = open({str(note)!r}, 'r+'); f.seek(0, 2); f.seek(f.tell() - 7); f.write('quokka\\n')"
    )
    assert note.read_text().endswith("replica quokka\n")
    assert _paths(ws, "quokkas", pool) == ["memory/2026-10-03.md"]


def test_memory_md_edited_by_another_process_is_found(ws: Workspace, pool: IndexPool) -> None:
    _workspace(ws)
    _settle(ws, pool)
    _elsewhere(f"open({str(ws.memory_md)!r}, 'a').write('- Wombat is the staging host.\\n')")
    assert _paths(ws, "wombat", pool) == ["MEMORY.md"]


def test_new_deleted_and_renamed_notes_are_found(ws: Workspace, pool: IndexPool) -> None:
    _workspace(ws)
    _settle(ws, pool)
    new = ws.memory_dir / "2026-10-09.md"
    _elsewhere(f"open({str(new)!r}, 'w').write('# New\\n\\n- Narwhal deploys on Fridays.\\n')")
    assert _paths(ws, "narwhal", pool) == ["memory/2026-10-09.md"]
    _settle(ws, pool)
    _elsewhere(f"import os; os.rename({str(new)!r}, {str(ws.memory_dir / '2026-10-10.md')!r})")
    assert _paths(ws, "narwhal", pool) == ["memory/2026-10-10.md"]
    _settle(ws, pool)
    _elsewhere(f"import os; os.unlink({str(ws.memory_dir / '2026-10-10.md')!r})")
    assert _paths(ws, "narwhal", pool) == []


def test_a_new_folder_is_watched_before_its_scan_is_kept(ws: Workspace, pool: IndexPool) -> None:
    _workspace(ws)
    _settle(ws, pool)
    sub = ws.memory_dir / "projects"
    note = sub / "2026-10-11.md"
    _elsewhere(
        f"import os; os.mkdir({str(sub)!r}); "
        f"open({str(note)!r}, 'w').write('# P\\n\\n- Okapi is the build host.\\n')"
    )
    assert _paths(ws, "okapi", pool) == ["memory/projects/2026-10-11.md"]
    _settle(ws, pool)  # the new folder's scan is kept once it was watched before a scan
    _elsewhere(f"open({str(note)!r}, 'a').write('- Axolotl runs the nightly job.\\n')")
    assert _paths(ws, "axolotl", pool) == ["memory/projects/2026-10-11.md"]


def test_a_replaced_folder_is_watched_again(ws: Workspace, pool: IndexPool) -> None:
    _workspace(ws)
    sub = ws.memory_dir / "team"
    sub.mkdir()
    (sub / "2026-10-12.md").write_text("# T\n\n- Ibex owns billing.\n")
    _settle(ws, pool)
    # another process moves the folder away and puts a new one at the same path
    _elsewhere(
        f"import os; os.rename({str(sub)!r}, {str(ws.root / 'team-old')!r}); os.mkdir({str(sub)!r})"
        f"; open({str(sub / '2026-10-13.md')!r}, 'w').write('# T\\n\\n- Gecko owns search.\\n')"
    )
    assert _paths(ws, "gecko", pool) == ["memory/team/2026-10-13.md"]
    assert _paths(ws, "ibex", pool) == []
    _settle(ws, pool)
    _elsewhere(f"open({str(sub / '2026-10-13.md')!r}, 'a').write('- Tapir owns ingest.\\n')")
    assert _paths(ws, "tapir", pool) == ["memory/team/2026-10-13.md"]


def test_a_symlinked_note_is_scanned_on_every_search(ws: Workspace, pool: IndexPool) -> None:
    """A link's target changes in a folder the scan never walked: no scan is kept."""
    _workspace(ws)
    other = ws.root / "notes-elsewhere"
    other.mkdir()
    target = other / "target.md"
    target.write_text("# L\n\n- Lemur is the backup host.\n")
    _old(target)
    (ws.memory_dir / "2026-10-14.md").symlink_to(target)
    for _ in range(3):
        assert _paths(ws, "lemur", pool) == ["memory/2026-10-14.md"]
    assert pool.watch.kept_scans == 0
    _elsewhere(f"open({str(target)!r}, 'a').write('- Marmot is the cache host.\\n')")
    assert _paths(ws, "marmot", pool) == ["memory/2026-10-14.md"]


def test_a_hard_linked_note_is_scanned_on_every_search(ws: Workspace, pool: IndexPool) -> None:
    _workspace(ws)
    outside = ws.root / "drafts"
    outside.mkdir()
    draft = outside / "draft.md"
    draft.write_text("# D\n\n- Pangolin holds the keys.\n")
    _old(draft)
    os.link(draft, ws.memory_dir / "2026-10-15.md")
    for _ in range(3):
        assert _paths(ws, "pangolin", pool) == ["memory/2026-10-15.md"]
    assert pool.watch.kept_scans == 0
    _elsewhere(f"open({str(draft)!r}, 'a').write('- Caracal rotates them.\\n')")
    assert _paths(ws, "caracal", pool) == ["memory/2026-10-15.md"]


def test_a_changed_size_cap_scans_again(ws: Workspace, pool: IndexPool) -> None:
    _workspace(ws)
    big = ws.memory_dir / "2026-10-16.md"
    big.write_text("# B\n\n- Bison " + "x" * 2000 + "\n")
    _old(big)
    assert "memory/2026-10-16.md" in _paths(ws, "bison", pool)
    _settle(ws, pool)
    (ws.root / "memcore.toml").write_text("[search]\nmax_file_bytes = 1000\n")
    res = search(ws, "bison", record=False, pool=pool)
    assert res.results == []
    assert any("2026-10-16.md" in w for w in res.warnings)


def test_a_closed_pool_scans_every_time(ws: Workspace) -> None:
    _workspace(ws)
    p = _watched_pool()
    _settle(ws, p)
    p.close()
    assert not p.watch.available
    (ws.memory_dir / "2026-10-17.md").write_text("# C\n\n- Dingo is new.\n")
    assert _paths(ws, "dingo", p) == ["memory/2026-10-17.md"]


def _inotify_fds() -> int:
    fds = Path("/proc/self/fd")
    count = 0
    for fd in fds.iterdir():
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed meanwhile
            count += os.readlink(fd) == "anon_inode:inotify"
    return count


def test_a_pool_holds_an_inotify_instance_from_its_first_search_to_close(
    ws: Workspace,
) -> None:
    _workspace(ws)
    before = _inotify_fds()
    p = IndexPool()
    assert _inotify_fds() == before  # instances are limited per user: none until needed
    search(ws, "kafka", record=False, pool=p)
    search(ws, "kafka", record=False, pool=p)
    assert _inotify_fds() == before + 1  # one for the pool, whatever it searches
    p.close()
    assert _inotify_fds() == before
