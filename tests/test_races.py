"""A person's in-place save racing ocm's write to the same note is never lost (issue #31):
one save placed exactly between ocm's "unchanged since I read it" check and its swap, then
a few hundred saves racing ocm's writes at random (bench/races.py measures thousands)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ocm.project import Project
from ocm.vault import folder, locks
from ocm.vault.markdown import Document

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import races  # noqa: E402


def test_a_save_between_the_check_and_the_swap_is_kept(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    project = Project(tmp_path / ".openCodeMemory", tmp_path)
    project.vault.ensure_layout()
    path = project.remember("Pool size is 10 connections", "gotcha").path
    real = folder.file_signature
    calls = []

    def signature_then_a_person_saves(at: Path):
        found = real(at)
        calls.append(at)
        if len(calls) == 2:  # ocm's check, after its temp file is written: then the save
            with open(path, "a", encoding="utf-8") as handle:
                handle.write("A line the person typed.\n")
        return found

    monkeypatch.setattr(folder, "file_signature", signature_then_a_person_saves)
    project.vault._edit(path, locks.note(path),
                        lambda doc: doc.frontmatter.set("importance", 9))
    text = path.read_text(encoding="utf-8")
    assert "A line the person typed." in text  # the person's save
    assert Document.parse(text).frontmatter.data["importance"] == 9  # ocm's change, re-applied
    assert len(calls) >= 3  # the change was read again and applied to the person's text
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]


def test_racing_person_saves_are_never_lost(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OCM_HOME", str(tmp_path / "home"))
    row = races.race(tmp_path, edits=200, pause_ms=10)
    assert row["lost_person_edits"] == 0, row
    assert row["ocm_writes"] > 0, row
