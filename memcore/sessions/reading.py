"""Reading one session into its short memory: the unread range of its summary level (user
and assistant text of the completed turns) or of its raw level (tool traffic), in calls packed
against the memory as it stands; each call's answer is published with its sources, the
decisions of the messages it read and the progress marker in one transaction that first
checks the lease and that the transcript still says what was read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore.errors import BadAnswer, InputError, SourceChanged
from memcore.sessions import catalog, decisions, refs
from memcore.sessions.store import (
    Source,
    get_state,
    latest,
    progress,
    publish_version,
    set_progress,
    set_state,
    transaction,
)
from memcore.sessions.transcripts import Message, Transcript, range_digest, read_transcript
from memcore.sessions.units import source_units

if TYPE_CHECKING:
    from memcore.sessions.run import Run


def verify(info: catalog.SessionInfo, start: int, through: int, digest: str) -> None:
    """Raise SourceChanged when the transcript's range no longer hashes the same."""
    try:
        st = info.path.stat()
        if st.st_size == info.size and st.st_mtime_ns == info.mtime_ns:
            return
        now_msgs = read_transcript(info.path).messages[start:through]
    except (OSError, InputError) as exc:
        raise SourceChanged(f"{info.id}: cannot re-read the transcript ({exc})") from None
    if range_digest(now_msgs) != digest:
        raise SourceChanged(f"{info.id}: messages {start}-{through - 1} changed during the run")


def review(run: Run, info: catalog.SessionInfo, tr: Transcript, *, raw: bool) -> None:
    """Feed one session's unread range (summary level or raw level) into its short memory."""
    prog = progress(run.conn, info.id)
    if raw:
        start, end, marker = prog["raw_through"], prog["summary_through"], "raw_through"
        msgs = [m for m in tr.messages[start:end] if not m.is_conversation]
    else:
        start, end, marker = prog["summary_through"], info.complete_through, "summary_through"
        msgs = [m for m in tr.messages[start:end] if m.is_conversation]
    kind = "raw" if raw else "messages"
    read = refs.seen(run.conn, info.id, "raw" if raw else "summary")
    msgs = refs.unread(msgs, read)  # read before (a line that only moved): not again
    changed = sum(1 for m in msgs if m.key in read)  # read with other text: re-read
    units = source_units(info.id, msgs, kind)
    limit = run.settings.session_limit
    ranges = {u.source.id: (u.start, u.end) for u in units}
    carried = {u.source.id: u.messages for u in units}
    pending = [u.source for u in units]
    pos = start
    calls = 0
    while pending:  # each call is packed against the memory as it stands before it
        cur = latest(run.conn, "session", info.id)
        batch = run.caller.next_batch(
            "session", limit, cur.ref if cur else None, cur.text if cur else "", pending
        )
        pending = pending[len(batch) :]
        through = ranges[pending[0].id][0] if pending else end
        digest = range_digest(tr.messages[pos:through])
        calls += 1
        text, _used = run.caller.run(
            "session", limit, cur.ref if cur else None, cur.text if cur else "", batch
        )
        with transaction(run.conn):
            run.lease.check()
            verify(info, pos, through, digest)
            if (cur is None and text) or (cur is not None and text != cur.text):
                srcs = [
                    Source(
                        kind,
                        s.ref,
                        ranges[s.id][0],
                        ranges[s.id][1],
                        digest,
                        s.text,
                        tuple((m.ref, m.digest) for m in carried[s.id]),
                    )
                    for s in batch
                ]
                if cur is not None:
                    srcs.insert(0, Source("previous", cur.ref, preview=cur.text))
                v, new = publish_version(
                    run.conn,
                    "session",
                    info.id,
                    text,
                    srcs,
                    now_iso=run.now_iso,
                    run_id=run.caller.run_id,
                    model=run.caller.llm.name,
                )
                if new:
                    run.wrote.append(v.ref)
            read_now = list(dict.fromkeys(m for s in batch for m in carried[s.id]))
            if not raw:
                decide(run, info.id, read_now, {s.id: carried[s.id] for s in batch})
            refs.mark_read(run.conn, info.id, read_now)
            set_progress(run.conn, info.id, run.now_iso, **{marker: through})
        pos = through
    if not units and end > start:  # nothing worth a call (e.g. only tool traffic): mark as read
        with transaction(run.conn):
            run.lease.check()
            set_progress(run.conn, info.id, run.now_iso, **{marker: end})
    if units:
        run.read.append(
            {
                "session": info.id,
                "level": "raw" if raw else "summary",
                "from": start,
                "to": end - 1,
                "sources": len(units),
                "calls": calls,
                "messages": len(msgs),  # unread messages in the range, read now
                "changed": changed,  # of which were read before with other text
            }
        )


def decide(
    run: Run, session: str, read_now: list[Message], carried: dict[str, tuple[Message, ...]]
) -> None:
    """Record the decisions of the messages a call read: the patterns', and the model's
    when its quote is a user's words (inside the publishing transaction)."""
    found = decisions.find(read_now)
    claimed, dropped = decisions.from_model(run.caller.decisions, carried)
    run.caller.checked += [
        {"task": "session", "reason": why.split(":")[0], "text": why.split(": ", 1)[-1]}
        for why in dropped
    ]
    new = decisions.record(
        run.conn, session, found + claimed, now_iso=run.now_iso, run_id=run.caller.run_id
    )
    run.decided += [f"decision:{n}" for n in new]


def review_safely(run: Run, info: catalog.SessionInfo, *, raw: bool) -> bool:
    try:
        tr = catalog.load(info, run.cache)
        review(run, info, tr, raw=raw)
    except InputError as exc:
        run.skipped.append({"session": info.id, "reason": f"unreadable: {exc}"})
        return False
    except (BadAnswer, SourceChanged) as exc:
        run.skipped.append({"session": info.id, "reason": str(exc)})
        return False
    return True


#: set once the decisions of the messages read before decisions were kept have been found
DECISIONS_BACKFILLED = "decisions_backfilled"


def backfill_decisions(run: Run, sessions: list[catalog.SessionInfo]) -> None:
    """Once per workspace database: the decisions of the user messages read before this
    memcore kept decisions (a database from an earlier version has read messages and no
    decision records). Found by the patterns only: the model read those messages already
    and is not asked again. Each is recorded as a run's own (its run id, listed in the run's
    report with the others); a session that cannot be read now is left out; a run stopped
    half way does it again next time (a decision already recorded is not recorded twice)."""
    if get_state(run.conn, DECISIONS_BACKFILLED) is not None:
        return
    stop = run.caller.should_stop or (lambda: None)
    for info in sessions:
        if info.status != "ok" or info.generated:
            continue
        read = refs.seen(run.conn, info.id, "summary")
        if not read:
            continue
        stop()
        try:
            tr = run.cache.get(info.id) or read_transcript(info.path)
        except InputError:
            continue
        said = [m for m in tr.messages if m.role == "user" and read.get(m.key) == m.digest]
        found = decisions.find(said)
        if not found:
            continue
        with transaction(run.conn):
            run.lease.check()
            new = decisions.record(
                run.conn, info.id, found, now_iso=run.now_iso, run_id=run.caller.run_id
            )
        run.decided += [f"decision:{n}" for n in new]
    with transaction(run.conn):
        set_state(run.conn, DECISIONS_BACKFILLED, run.now_iso)
