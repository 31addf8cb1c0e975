"""Two note files holding one id (a file manager's or Obsidian's "duplicate": `x.md` copied
to `x 1.md`): which copy is the note, and which ids are held twice.

The rule is deterministic and needs no state: the copy whose file name is its id wins, then
the first by vault-relative path. Every reader (find, search, recall) keeps that copy only;
`ocm status` and `ocm doctor` list the others so a person can delete or re-id them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from .store import Vault

T = TypeVar("T")


def keeper_rank(note_id: str, path: Path) -> tuple[bool, str]:
    """Sort key: the smallest is the copy that counts as the note."""
    return path.stem != note_id, path.as_posix()


def one_per_id(items: Iterable[T], key: Callable[[T], tuple[str, str, Path]]) -> list[T]:
    """`items` without the extra copies of a note, in their order; `key(item)` is
    (group, id, path), the group telling vaults apart (an id is unique per vault)."""
    items = list(items)
    keys = [key(item) for item in items]
    if len({(group, note_id) for group, note_id, _ in keys}) == len(keys):
        return items  # no id held twice (the usual case): no path to compare
    best: dict[tuple[str, str], tuple[tuple[bool, str], int]] = {}
    for position, (group, note_id, path) in enumerate(keys):
        rank = keeper_rank(note_id, path)
        held = best.get((group, note_id))
        if held is None or rank < held[0]:
            best[(group, note_id)] = (rank, position)
    keep = {position for _, position in best.values()}
    return [item for position, item in enumerate(items) if position in keep]


def duplicate_ids(vault: Vault) -> dict[str, list[str]]:
    """id -> vault-relative paths of every id held by more than one note, the copy that
    counts first. Reads each note's frontmatter (for `status` and `doctor`, not searches)."""
    by_id: dict[str, list[Path]] = {}
    for path in vault.note_paths():
        data = vault._frontmatter_only(path) or {}
        note_id = str(data.get("id") or path.stem)
        by_id.setdefault(note_id, []).append(path)
    return {note_id: [vault.relpath(p) for p in sorted(paths, key=lambda p: keeper_rank(
                note_id, Path(vault.relpath(p))))]
            for note_id, paths in sorted(by_id.items()) if len(paths) > 1}
