"""Tombstones: a new record that nearly copies a retired one (superseded, resolved or
archived) is not stored as a new active twin unless forced; `remember` answers with the old
record's id, its status, what replaced it or when it was resolved, and how to force.

A retired record is a fact someone decided no longer holds (superseded: a newer record says
what does; resolved: the problem is gone; archived: a person or agent chose to forget it).
An agent asked to save what is worth keeping (a nudge at the end of a turn) restates such
facts from its context, which may be older than the vault; storing them again would bring
back what was retired. Archived records count too: re-storing a fact that was forgotten on
purpose undoes that choice as silently as re-storing a superseded one.

"Nearly copies" is the near-copy test of `nearcopies.same` (the same words and meaning,
its form changed), at its bars: a distinct record that merely shares words is stored.
`python bench/tombstones.py` counts the records it would wrongly refuse on the labelled
pairs (bench/README.md). The records compared are the new record's `Lookalikes` (the index's
closest records, else the type's folder), read once with the active checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import OcmError
from .nearcopies import FLOOR, TITLE_MARGIN, bag, same
from .supersede import EXCLUDED_TYPES, MAX_FACT_CHARS, Meaning
from .words import cosine

if TYPE_CHECKING:
    from ..folder import NoteFolder
    from ..memories import MemoryNote
    from .lookalikes import Lookalikes

RETIRED = ("superseded", "resolved", "archived")


@dataclass
class Tombstone:
    """The retired record a new one nearly copies, and what retired it."""
    id: str
    path: Path
    title: str
    status: str
    when: str  # the day it was retired (its last update), or ""
    resolution: str = ""
    replaced_by: str = ""  # the superseding record: "id ('title')", or why it is unknown

    def notice(self) -> str:
        """What `remember` answers: the words an agent reads and acts on."""
        on = f" on {self.when}" if self.when else ""
        head = (f"not stored: this nearly copies {self.id} ({self.title!r}), "
                f"{self.status}{on}")
        if self.status == "superseded":
            told = f" by {self.replaced_by}, which holds now" if self.replaced_by else ""
            then = "If this is a new fact the newer record does not cover"
        elif self.status == "resolved":
            told = f" ({self.resolution})" if self.resolution else ""
            then = (f"If the problem is back, reactivate {self.id} (ocm__reactivate_memory, "
                    "`ocm reactivate`) or, if this is a different fact")
        else:
            told = f" ({self.resolution})" if self.resolution else ""
            then = f"To bring it back, reactivate {self.id}; if this is a different fact"
        return (f"{head}{told}. Nothing was written. {then}, call remember again with "
                "force: true (CLI: --force).")


def retired_copy(vault: NoteFolder, memory_type: str, title: str, text: str,
                 meaning: Meaning | None, looks: Lookalikes) -> Tombstone | None:
    """The retired record of `memory_type` among `looks` that (`title`, `text`) nearly
    copies, the closest in words first; None when there is none. Unreadable files are
    skipped (the caller reports `looks.broken`)."""
    if memory_type in EXCLUDED_TYPES or len(text) > MAX_FACT_CHARS:
        return None
    words = bag(text)
    best: tuple[float, Path, MemoryNote] | None = None
    for path, note in looks.notes(FLOOR - TITLE_MARGIN, keyless=False, retired=True):
        if note.type != memory_type or note.status not in RETIRED:
            continue
        if len(note.content) > MAX_FACT_CHARS:
            continue
        score = cosine(words, bag(note.content))
        if score < FLOOR or (best is not None and score <= best[0]):
            continue
        if same(score, meaning(note.content, text) if meaning else None):
            best = (score, path, note)
    if best is None:
        return None
    _, path, note = best
    when = note.updated.date().isoformat() if note.updated else ""
    return Tombstone(note.id, path, note.title, note.status, when,
                     str(note.fm.get("resolution") or ""), _replacement(vault, note))


def _replacement(vault: NoteFolder, note: MemoryNote) -> str:
    """The record that superseded `note`, named for the agent."""
    newer = note.superseded_by
    if note.status != "superseded" or not newer:
        return ""
    try:
        _, record = vault.read_memory(newer)
    except (OcmError, OSError) as exc:
        return f"{newer} (unreadable: {exc})"
    return f"{record.id} ({record.title!r}, {record.status})"
