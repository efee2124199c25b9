"""A transcript swapped for a FIFO after the scan listed it is refused when read, never
waited on: every later read opens the path without blocking and checks the opened file."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from memcore.errors import InputError
from memcore.sessions.binding import transcript_cwd
from memcore.sessions.recall_api import recall
from memcore.sessions.run import execute
from memcore.sessions.transcripts import read_transcript
from memcore.workspace.core import Workspace
from tests.test_sessions_dream import NOW, make_session, turns_for


class Fifo:
    """A FIFO at ``path`` with a writer that opens it and closes it at once: a reader that
    blocks on the open gets an empty file instead of hanging (so the old behaviour fails
    the test rather than hanging it); at the end the writer is released either way."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.unlink()
        os.mkfifo(path)
        self.thread = threading.Thread(target=self._write, daemon=True)
        self.thread.start()

    def _write(self) -> None:
        fd = os.open(self.path, os.O_WRONLY)  # blocks until a reader opens the FIFO
        os.close(fd)

    def close(self) -> None:
        fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)  # lets a waiting writer go
        self.thread.join()
        os.close(fd)


@pytest.fixture
def swapped(ws: Workspace):
    path = make_session(ws, "s0", turns_for(0))
    assert execute(ws, now=NOW)["status"] == "ok"  # scanned and read as a regular file
    fifo = Fifo(path)
    yield ws, path
    fifo.close()


def test_a_fifo_in_place_of_a_scanned_transcript_is_refused(swapped) -> None:
    ws, path = swapped
    with pytest.raises(InputError, match="not a regular file"):
        read_transcript(path)
    # the session list still knows it as readable; reading its messages now refuses
    with pytest.raises(InputError, match="not a regular file"):
        recall(ws, {"memory": "session", "session": "s0", "from": 0})
    assert recall(ws, {"memory": "session", "session": "s0"})["attachments"] == []
    assert transcript_cwd(path) is None
