"""What a new memory record is to the records of its type, as `Vault.remember` writes it:
a near-copy of a retired record (a tombstone: not stored unless forced), the older record it
supersedes (seed 000), else the one it nearly copies; and, for a failure, the agent's or the
automatic record of the same failure it merges with (`autofix`). The checks of one type look
at the same records (`Lookalikes`), each read once."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..links import unlink
from ..memories import MemoryNote
from . import autofix
from .lookalikes import Lookalikes
from .nearcopies import Record, copy_of
from .supersede import Match, Meaning, best_match
from .tombstones import Tombstone, retired_copy

if TYPE_CHECKING:
    from ..folder import NoteFolder


@dataclass
class Verdict:
    match: Match | None = None  # the record the new one supersedes
    copy: Record | None = None  # the active record it nearly copies
    tombstone: Tombstone | None = None  # the retired record it nearly copies
    automatic: tuple[Path, MemoryNote, autofix.Failure] | None = None  # its automatic twin
    agent: tuple[Path, MemoryNote] | None = None  # (a new automatic bug_fix) the agent's twin
    failure: autofix.Failure | None = None  # (a new automatic bug_fix) what it records
    broken: dict[Path, str] = field(default_factory=dict)  # record files that were skipped

    def skipped(self) -> str:
        """The unreadable record files the checks skipped, for the notice."""
        if not self.broken:
            return ""
        listed = "; ".join(f"{path.name}: {why}" for path, why in sorted(self.broken.items())[:3])
        return f"skipped {len(self.broken)} unreadable record file(s) ({listed})"


def compare(vault: NoteFolder, fields: dict, title: str, content: str,
            candidates: list[Path] | None, meaning: Meaning | None, supersede: bool,
            near_copies: bool, force: bool = False) -> Verdict:
    """What the new record `fields` is to the others. With `near_copies` (off for backdated
    and bulk writes): the retired record it nearly copies, unless `force` or it has a key
    (which stops everything else), and its twin of the same failure. Then the record it
    supersedes (with `supersede`), else the active one it nearly copies. `candidates`: the
    records to compare with (else the type's folder)."""
    verdict = Verdict()
    memory_type, key = fields["type"], fields.get("key")
    looks = Lookalikes(vault, memory_type, title, content, candidates)
    if near_copies:
        if not (force or key):
            verdict.tombstone = retired_copy(vault, memory_type, title, content, meaning,
                                             looks)
            if verdict.tombstone is not None:
                verdict.broken = looks.broken
                return verdict
        session = unlink(fields.get("session"))
        files = list(fields.get("files") or [])
        if autofix.is_auto(memory_type, key):
            verdict.failure = autofix.failure(str(key), content, files, session)
            if verdict.failure is not None:
                verdict.agent = autofix.agent_twin(vault, verdict.failure, verdict.broken)
                if verdict.agent is not None:
                    return verdict
        else:
            verdict.automatic = autofix.automatic_twin(vault, memory_type, key, title, content,
                                                       files, session, verdict.broken)
    if supersede:
        verdict.match = best_match(fields, content, looks, meaning=meaning)
    if verdict.match is None and near_copies:
        verdict.copy = copy_of(memory_type, title, content, meaning, looks)
    verdict.broken.update(looks.broken)
    return verdict
