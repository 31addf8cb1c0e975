"""A person's in-place saves racing ocm's writes to one note (issue #31).

One process plays the person: it reads the note, appends a line `person-edit-<i>` and saves
in place (open with truncation, write, close: what many editors do), with a random pause of
0 to `--pause-ms` between saves. Meanwhile ocm rewrites the same note's frontmatter as fast
as it can through `Vault._edit` (the read-modify-write every ocm change to a note goes
through: lock, read, "unchanged since I read it" check, swap). At the end every
`person-edit-<i>` line must be in the note: a missing one is a person's save that ocm
overwrote.

    nice .venv/bin/python bench/races.py --edits 5000
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ocm.project import Project  # noqa: E402
from ocm.vault import locks  # noqa: E402
from ocm.vault.markdown import Document  # noqa: E402


def _person(path: str, edits: int, seed: int, pause: float,
            ready: multiprocessing.Event) -> None:
    rng = random.Random(seed)
    ready.wait()
    for i in range(edits):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        with open(path, "w", encoding="utf-8") as handle:  # an in-place save
            handle.write(text + f"person-edit-{i}\n")
        time.sleep(rng.random() * pause)


def race(folder: Path, edits: int, seed: int = 0, pause_ms: float = 20.0) -> dict[str, int]:
    """Run `edits` person saves against ocm writes to one note; what was lost."""
    project = Project(folder / ".openCodeMemory", folder)
    project.vault.ensure_layout()
    result = project.remember("Racing note for person edits", "gotcha")
    path = result.path
    vault = project.vault
    ready = multiprocessing.get_context("fork").Event()
    person = multiprocessing.get_context("fork").Process(
        target=_person, args=(str(path), edits, seed, pause_ms / 1000, ready))
    person.start()
    writes = conflicts = 0

    def mutate(doc: Document) -> None:
        doc.frontmatter.set("importance", 1 + writes % 9)

    ready.set()
    while person.is_alive():
        try:
            _, changed = vault._edit(path, locks.note(path), mutate)
            writes += changed
        except Exception:  # noqa: BLE001 - a Conflict (kept changing): counted, not fatal
            conflicts += 1
    person.join()
    text = path.read_text(encoding="utf-8")
    lost = sum(1 for i in range(edits) if f"person-edit-{i}\n" not in text)
    return {"person_edits": edits, "ocm_writes": writes, "ocm_gave_up": conflicts,
            "lost_person_edits": lost}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=1, help="independent notes, in turn")
    parser.add_argument("--pause-ms", type=float, default=20.0,
                        help="longest pause between two person saves")
    args = parser.parse_args()
    totals: dict[str, int] = {}
    for round_ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="ocm-races-") as tmp:
            os.environ.setdefault("OCM_HOME", str(Path(tmp) / "home"))
            row = race(Path(tmp), args.edits, seed=round_, pause_ms=args.pause_ms)
        print(json.dumps(row))
        for key, value in row.items():
            totals[key] = totals.get(key, 0) + value
    print(json.dumps({"total": totals}))


if __name__ == "__main__":
    main()
