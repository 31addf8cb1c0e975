"""The listing by name a first search with no index makes (ocm/vault/freshness/scan.py
`names`, no `stat` of each note) names the same notes as the full scan with signatures, in
folders of notes only (a month of sessions), folders mixing notes and subfolders, and past
what is never a note: dot-names, other files, a linked folder."""

from __future__ import annotations

import os
from pathlib import Path

from ocm.vault.freshness.scan import names, signatures


def test_names_lists_what_the_full_scan_finds(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    notes = [f"sessions/2026-11/2026-11-0{day}_a.md" for day in range(1, 6)] + [
        "sessions/loose.md", "memories/gotcha/kafka.md", "memories/gotcha/deep/inner.md",
        "memories/top.md", "transcripts/t1.md"]
    for rel in notes:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    for rel in ["memories/.hidden.md", "memories/.trash/old.md", "memories/gotcha/notes.txt",
                "sessions/2026-11/.ocm-tmp-1.md", "elsewhere/outside.md"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    os.symlink(root / "elsewhere", root / "memories" / "linked")  # never followed

    listed = names(str(root))

    assert sorted(listed) == sorted(notes) == sorted(signatures(str(root)))
    assert len(listed) == len(set(listed))


def test_names_of_a_vault_without_note_folders_is_empty(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("x")  # beside the note folders: not a note
    assert names(str(tmp_path)) == []
