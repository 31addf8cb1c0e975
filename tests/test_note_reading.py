"""Reading a note's file (`read_note_text`): the whole text up to the size limit, a clear
error past it, and the other refusals, on real files (a build reads every note this way,
asking for the file's size rather than the limit's)."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from ocm.vault.boundary import MAX_NOTE_BYTES
from ocm.vault.errors import NoteFormatError, NotFound
from ocm.vault.folder import read_note_text


def test_a_note_reads_whole_at_any_size_up_to_the_limit(tmp_path: Path) -> None:
    for size in (0, 1, 4095, 4096, 65537, MAX_NOTE_BYTES):
        path = tmp_path / f"n{size}.md"
        text = ("é" + "x" * 9) * (size // 11) + "y" * (size % 11)
        path.write_bytes(text.encode())
        assert len(text.encode()) == size
        assert read_note_text(path) == text


def test_a_note_over_the_limit_is_refused_with_its_size(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_bytes(b"x" * (MAX_NOTE_BYTES + 1))
    with pytest.raises(NoteFormatError) as caught:
        read_note_text(path)
    assert f"note is {MAX_NOTE_BYTES + 1:,} bytes (max {MAX_NOTE_BYTES:,})" in str(caught.value)
    path.write_bytes(b"x" * (3 * MAX_NOTE_BYTES))
    with pytest.raises(NoteFormatError, match=f"note is {3 * MAX_NOTE_BYTES:,} bytes"):
        read_note_text(path)


def test_a_note_that_grew_after_it_was_opened_is_read_to_its_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the size `fstat` gave (a file appended to while it is read): the rest is read
    too."""
    path = tmp_path / "grows.md"
    path.write_text("first\n")
    real_fstat = os.fstat

    def stale_fstat(fd: int) -> SimpleNamespace:  # the size before an append
        size = real_fstat(fd).st_size
        with path.open("a") as handle:
            handle.write("second\n" * 5000)
        return SimpleNamespace(st_size=size)

    monkeypatch.setattr(os, "fstat", stale_fstat)
    assert read_note_text(path) == "first\n" + "second\n" * 5000


def test_missing_linked_and_non_utf8_notes_are_refused(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        read_note_text(tmp_path / "gone.md")
    target = tmp_path / "target.md"
    target.write_text("text")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    with pytest.raises(NoteFormatError, match="symbolic link"):
        read_note_text(link)
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"ok \xff here")
    with pytest.raises(NoteFormatError, match=r"not UTF-8 \(byte 3\)"):
        read_note_text(bad)
