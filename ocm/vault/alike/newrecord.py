"""What a new memory record is to the active records of its type, as `Vault.remember`
writes it: the older record it supersedes (seed 000), else the one it nearly copies. Both
checks look at the same records (`Lookalikes`), each read once."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .lookalikes import Lookalikes
from .nearcopies import Record, copy_of
from .supersede import Match, Meaning, best_match

if TYPE_CHECKING:
    from ..folder import NoteFolder


def compare(vault: NoteFolder, fields: dict, title: str, content: str,
            candidates: list[Path] | None, meaning: Meaning | None, supersede: bool,
            near_copies: bool) -> tuple[Match | None, Record | None]:
    """(the record `fields` supersedes, the record it nearly copies), each None when there
    is none or its check is off; a near-copy is looked for only when nothing is
    superseded. `candidates`: the records to compare with (else the type's folder)."""
    if not (supersede or near_copies):
        return None, None
    memory_type = fields["type"]
    looks = Lookalikes(vault, memory_type, title, content, candidates)
    match = best_match(fields, content, looks, meaning=meaning) if supersede else None
    if match is not None or not near_copies:
        return match, None
    return None, copy_of(memory_type, title, content, meaning, looks)
