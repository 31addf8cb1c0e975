"""A session's one rename: created before it had a slug, it takes the seed's file name
`<id>_<slug>.md` at its first checkpoint that gives one, and the links to it follow."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from . import locks
from .boundary import check_inside
from .errors import OcmError
from .links import link, unlink
from .markdown import Document
from .memories import MemoryNote

if TYPE_CHECKING:
    from .folder import NoteFolder


def rename_session(vault: NoteFolder, path: Path, slug: str | None) -> Path:
    """Give a session created before it had a slug the seed's file name, once."""
    if not slug:
        return path
    data = vault._frontmatter_only(path) or {}
    note_id = str(data.get("id") or path.stem)
    if path.stem != note_id or note_id.endswith(f"_{slug}"):
        return path
    target = path.with_name(f"{path.stem}_{slug}.md")
    check_inside(vault.root, target)
    if target.exists():
        return path
    os.replace(path, target)
    _relink(vault, path.stem, target.stem)
    return target


def _relink(vault: NoteFolder, old_stem: str, new_stem: str) -> None:
    """After a session's one rename, point its memories' and its transcript's `session`
    links at the new file name (Obsidian resolves links by file name; ids keep working
    either way)."""
    for path in vault.note_paths():
        if vault.kind_of(path) not in ("memory", "transcript"):
            continue
        value = (vault._frontmatter_only(path) or {}).get("session")
        if not (isinstance(value, str) and value.startswith("[[")
                and unlink(value) == old_stem):
            continue

        def mutate(doc: Document) -> None:
            MemoryNote(doc).set("session", link(new_stem))

        try:
            vault._edit(path, locks.note(path), mutate)
        except OcmError:
            continue
