"""The listing taken ahead by `find` (ocm/vault/scanahead.py) records exactly the notes the
in-process scan does, and an index that finds it byte for byte as it last matched its
manifest skips the scan; any change to a note (even 1 ns of mtime) is still indexed. Real
`find`, real Whoosh index."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ocm.indexer import embed
from ocm.indexer.index import LISTING, NoteIndex
from ocm.indexer.manifest import Manifest
from ocm.project import Project
from ocm.vault import scanahead
from ocm.vault.store import Vault

pytestmark = pytest.mark.skipif(
    not hasattr(os, "memfd_create") or shutil.which("find") is None,
    reason="the listing ahead needs memory files and GNU find")


def listing_of(root: Path) -> bytes:
    scanahead.start(str(root))
    listing = scanahead.take(str(root))
    assert listing is not None
    return listing


def test_the_listing_holds_what_the_scan_records(project: Project) -> None:
    project.remember("Kafka consumer lag alarms fire at 10k", "gotcha")
    root = project.vault.root
    memories = root / "memories"
    (memories / "nested" / "deeper").mkdir(parents=True)
    (memories / "nested" / "deeper" / "ünïcode note.md").write_text("x")
    (memories / "nested" / "not-a-note.txt").write_text("x")
    (memories / ".hidden").mkdir()
    (memories / ".hidden" / "skipped.md").write_text("x")
    (memories / ".ocm-tmp-123.md").write_text("x")
    (memories / "folder.md").mkdir()
    (memories / "folder.md" / "inside.md").write_text("x")
    os.symlink(memories / "nested" / "not-a-note.txt", memories / "link.md")
    os.symlink(memories / "nested", memories / "linked-folder")
    expected = Vault(root).note_signatures()
    assert scanahead.signatures(listing_of(root)) == expected
    assert "memories/nested/deeper/ünïcode note.md" in expected
    assert "memories/folder.md/inside.md" in expected
    assert not any(".hidden" in rel or "link" in rel or ".ocm-tmp" in rel for rel in expected)


def test_nothing_is_taken_that_was_not_started(tmp_path: Path) -> None:
    assert scanahead.take(str(tmp_path)) is None
    scanahead.start(str(tmp_path))  # no note folders: nothing to list
    assert scanahead.take(str(tmp_path)) is None


def test_a_matching_listing_skips_the_scan_and_any_change_is_indexed(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embed.SEMANTIC_ENV, "1")  # the vectors too vouch by the manifest
    project.remember("Kafka consumer lag alarms fire at 10k", "gotcha")
    project.search("kafka")
    project.index_for(project.vault).close()
    root = project.vault.root

    def search(query: str) -> list[str]:
        scanahead.start(str(root))
        fresh = Project.open(cwd=project.root)
        return [hit.title for hit in fresh.search(query)]

    # The first process with a listing checks it against the manifest and records it.
    assert search("kafka") and (project.vault.index_dir / LISTING).is_file()

    def no_scan(self: NoteIndex, full: bool = False) -> dict:
        raise AssertionError("the listing matched: no scan")

    def no_read(self: Manifest) -> dict:
        raise AssertionError("the listing matched: the manifest is not read")

    with monkeypatch.context() as patch:
        patch.setattr(NoteIndex, "_scan", no_scan)
        patch.setattr(Manifest, "load", no_read)
        assert search("kafka")
    # An in-place edit: same size, 1 ns later.
    path = next((root / "memories").rglob("*.md"))
    before = path.stat()
    path.write_text(path.read_text().replace("Kafka", "Kafkb"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1))
    assert path.stat().st_size == before.st_size
    assert search("kafkb") and not search("kafka")


def test_a_listing_the_search_did_not_take_is_dropped(project: Project) -> None:
    from ocm.cli import searching
    from ocm.vault.errors import OcmError

    project.remember("Kafka consumer lag alarms fire at 10k", "gotcha")
    root = str(project.vault.root)
    with pytest.raises(OcmError):  # raises after the listing started, before the check
        searching.run(query=("kafka",), vault=project.vault.root, limit=0)
    # Left there, a later check in this process would take a listing of the past.
    assert scanahead.take(root) is None
    searching.run(query=("kafka",), vault=project.vault.root, as_json=True)
    assert scanahead.take(root) is None


def test_a_listing_read_inexactly_is_not_recorded(project: Project,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    project.remember("Kafka consumer lag alarms fire at 10k", "gotcha")
    project.search("kafka")
    # A `find` whose times this cannot read to the nanosecond: the scan decides, and the
    # listing is not kept to vouch for the index later.
    monkeypatch.setattr(scanahead, "signatures", lambda listing: None)
    scanahead.start(str(project.vault.root))
    assert Project.open(cwd=project.root).search("kafka")
    assert not (project.vault.index_dir / LISTING).exists()
