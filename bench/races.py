"""A person's in-place saves racing ocm's writes to one note (issue #31).

One process plays the person: it reads the note, appends a line `person-edit-<i>` and saves
in place (open with truncation, write, close: what many editors do), with a random pause of
0 to `--pause-ms` between saves. Meanwhile ocm rewrites the same note's frontmatter as fast
as it can through `Vault._edit` (the read-modify-write every ocm change to a note goes
through: lock, read, "unchanged since I read it" check, swap). At the end every
`person-edit-<i>` line must be in the note: a missing one is a person's save that ocm
overwrote.

    nice .venv/bin/python bench/races.py --edits 5000

`--trace FILE` logs every step of both sides (monotonic ns, inode, size, mtime, the last
person line read or written; ocm's stats, reads, exchanges and unlinks) and, for each lost
line, writes to FILE how it was lost and the steps around the person's save of it.
`--stall-ms N` has ocm sleep up to N ms (at random) before and after each swap of its
checked write, as a heavily loaded machine deschedules it there; this makes the rare
interleavings common (docs/decisions.md, "Racing saves", branch races9).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ocm.project import Project  # noqa: E402
from ocm.vault import atomic, folder, locks  # noqa: E402
from ocm.vault.markdown import Document  # noqa: E402

Event = list[Any]  # [monotonic ns, who, what, ...]


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.startswith("person-edit-")]
    return lines[-1] if lines else "-"


def _number(line: str) -> int:
    return int(line.rsplit("-", 1)[1]) if line != "-" else -1


def _person(path: str, edits: int, seed: int, pause: float, ready: Any,
            trace: str | None) -> None:
    rng = random.Random(seed)
    events: list[Event] = []

    def log(handle: Any, *event: Any) -> None:
        if trace:
            st = os.fstat(handle.fileno())
            events.append([time.monotonic_ns(), "person", *event, st.st_ino, st.st_size,
                           st.st_mtime_ns])

    ready.wait()
    for i in range(edits):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
            log(handle, "read", i)
            if trace:
                events[-1].append(_last_line(text))
        with open(path, "w", encoding="utf-8") as handle:  # an in-place save
            log(handle, "open-trunc", i)
            handle.write(text + f"person-edit-{i}\n")
            if trace:
                handle.flush()
            log(handle, "wrote", i)
        time.sleep(rng.random() * pause)
    if trace:
        Path(trace + ".person").write_text(json.dumps(events))


def _traced_ocm(events: list[Event] | None, stall: float, seed: int) -> Callable[[], None]:
    """Wrap the steps of ocm's checked write with logging (into `events` unless None) and
    stalls (up to `stall` s before and after each swap); returns the undo."""
    rng = random.Random(seed)
    real_read, real_exchange, real_unlink = folder.read_note_text, atomic._exchange, os.unlink

    def log(*event: Any) -> None:
        if events is not None:
            events.append([time.monotonic_ns(), "ocm", *event])

    def signature(at: Path) -> tuple[int, int] | None:
        try:
            st = at.stat()
        except FileNotFoundError:
            log("stat", at.name[:9], None)
            return None
        log("stat", at.name[:9], st.st_ino, st.st_size, st.st_mtime_ns)
        return (st.st_mtime_ns, st.st_size)

    def read(at: Path) -> str:
        text = real_read(at)
        log("read", len(text.encode()), _last_line(text))
        return text

    def exchange(a: Path, b: Path) -> bool:
        if stall:  # (even a sleep(0) gives the processor away under load)
            time.sleep(rng.random() * stall)
        done = real_exchange(a, b)
        log("exchange", done, os.lstat(b).st_ino, os.lstat(a).st_ino)
        if stall:
            time.sleep(rng.random() * stall)
        return done

    def unlink(at: Any, *args: Any, **kwargs: Any) -> None:
        try:
            st = os.lstat(at)
            log("unlink", str(at)[-40:][:12], st.st_ino, st.st_size, st.st_mtime_ns)
        except OSError:
            pass
        real_unlink(at, *args, **kwargs)

    real_signature = folder.file_signature
    folder.file_signature = signature
    folder.read_note_text = read
    atomic._exchange = exchange
    atomic.os.unlink = unlink  # os.unlink, for the whole process while racing

    def undo() -> None:
        folder.file_signature = real_signature
        folder.read_note_text = real_read
        atomic._exchange = real_exchange
        atomic.os.unlink = real_unlink
    return undo


def race(folder_: Path, edits: int, seed: int = 0, pause_ms: float = 20.0,
         trace: str | None = None, stall_ms: float = 0.0) -> dict[str, int]:
    """Run `edits` person saves against ocm writes to one note; what was lost."""
    project = Project(folder_ / ".openCodeMemory", folder_)
    project.vault.ensure_layout()
    result = project.remember("Racing note for person edits", "gotcha")
    path = result.path
    vault = project.vault
    ready = multiprocessing.get_context("fork").Event()
    person = multiprocessing.get_context("fork").Process(
        target=_person, args=(str(path), edits, seed, pause_ms / 1000, ready, trace))
    person.start()
    writes = conflicts = 0
    events: list[Event] = []
    undo = (_traced_ocm(events if trace else None, stall_ms / 1000, seed)
            if trace or stall_ms else None)

    def mutate(doc: Document) -> None:
        doc.frontmatter.set("importance", 1 + writes % 9)

    ready.set()
    try:
        while person.is_alive():
            if trace:
                events.append([time.monotonic_ns(), "ocm", "edit", writes])
            try:
                _, changed = vault._edit(path, locks.note(path), mutate)
                writes += changed
            except Exception:  # noqa: BLE001 - a Conflict (kept changing): counted, not fatal
                conflicts += 1
    finally:
        if undo:
            undo()
    person.join()
    text = path.read_text(encoding="utf-8")
    missing = [i for i in range(edits) if f"person-edit-{i}\n" not in text]
    if trace and missing:
        _report(trace, events, missing)
    row = {"person_edits": edits, "ocm_writes": writes, "ocm_gave_up": conflicts,
           "lost_person_edits": len(missing)}
    if trace:  # swaps beyond one per write: a save was put back (or kept) after the swap
        row["ocm_swaps"] = sum(1 for event in events if event[2] == "exchange")
    return row


def _report(trace: str, ocm_events: list[Event], missing: list[int]) -> None:
    person_events = json.loads(Path(trace + ".person").read_text())
    merged = sorted(person_events + ocm_events, key=lambda event: event[0])
    with open(trace, "a", encoding="utf-8") as out:
        for i in missing:
            at = next(n for n, event in enumerate(merged)
                      if event[1] == "person" and event[2] == "wrote" and event[3] == i)
            wrote = merged[at]
            opened = max(n for n in range(at) if merged[n][1:4] == ["person", "open-trunc", i])
            read = max(n for n in range(opened) if merged[n][1:4] == ["person", "read", i])
            unlinks = [n for n, event in enumerate(merged) if event[1:3] == ["ocm", "unlink"]
                       and event[4] == wrote[4]]
            stale = any(event[1:3] == ["person", "read"] and event[3] > i
                        and _number(event[7]) < i for event in merged[at:])
            how = ("its open() found ocm's old file before the swap and emptied it only after "
                   "ocm's check: the save went into the file ocm removed"
                   if any(read < n < opened for n in unlinks) else
                   "ocm removed the file the save went into"
                   if any(n > at and merged[n][5] == wrote[5] for n in unlinks) else
                   "a later save was made from a read that lacked it" if stale else
                   "neither (see the steps)")
            out.write(f"== person-edit-{i} lost: {how}\n")
            start = merged[max(0, at - 40)][0]
            for event in merged[max(0, at - 40): at + 40]:
                out.write(f"{(event[0] - start) / 1000:10.1f}us {json.dumps(event[1:])}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=1, help="independent notes, in turn")
    parser.add_argument("--pause-ms", type=float, default=20.0,
                        help="longest pause between two person saves")
    parser.add_argument("--trace", help="log both sides; the steps around a lost save here")
    parser.add_argument("--stall-ms", type=float, default=0.0,
                        help="ocm sleeps up to this long before and after each swap")
    args = parser.parse_args()
    totals: dict[str, int] = {}
    for round_ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="ocm-races-") as tmp:
            os.environ.setdefault("OCM_HOME", str(Path(tmp) / "home"))
            row = race(Path(tmp), args.edits, seed=round_, pause_ms=args.pause_ms,
                       trace=args.trace, stall_ms=args.stall_ms)
        print(json.dumps(row), flush=True)
        for key, value in row.items():
            totals[key] = totals.get(key, 0) + value
    print(json.dumps({"total": totals}))


if __name__ == "__main__":
    main()
