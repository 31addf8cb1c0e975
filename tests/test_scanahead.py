"""The listing taken ahead by `find` (ocm/vault/freshness/scanahead.py) records exactly the notes
the in-process scan does, and an index that finds it byte for byte as it last matched its
manifest skips the scan; any change to a note (even 1 ns of mtime) is still indexed. Real
`find`, real Whoosh index."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from ocm.indexer import embed
from ocm.indexer.index import LISTING, NoteIndex
from ocm.indexer.manifest import Manifest
from ocm.project import Project
from ocm.vault.freshness import scanahead
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


def test_a_vault_named_relative_is_listed_from_its_own_folder(
        project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`find` runs in the vault's folder (a shell `cd`s there): a relative name is made
    absolute first, so $CDPATH (which could send `cd` to another folder of that name and
    have it print where it went, into the listing) plays no part."""
    project.remember("Kafka consumer lag alarms fire at 10k", "gotcha")
    root = project.vault.root
    expected = listing_of(root)
    decoy = tmp_path / "decoy" / root.name
    (decoy / "memories").mkdir(parents=True)
    (decoy / "memories" / "other.md").write_text("x")
    monkeypatch.setenv("CDPATH", str(decoy.parent))
    monkeypatch.chdir(root.parent)
    assert listing_of(Path(root.name)) == expected


def test_nothing_is_taken_that_was_not_started(tmp_path: Path) -> None:
    assert scanahead.take(str(tmp_path)) is None
    scanahead.start(str(tmp_path))  # no note folders: nothing to list
    assert scanahead.take(str(tmp_path)) is None


def test_a_listing_is_compared_in_place_with_the_one_expected(project: Project) -> None:
    """`take(root, expected)` gives back `expected` itself when `find` wrote those very
    bytes (never copied), and the listing as bytes of its own when it differs in one byte,
    in length, or when none was expected."""
    project.remember("Kafka consumer lag alarms fire at 10k", "gotcha")
    project.remember("Postgres vacuum runs nightly", "gotcha")
    root = project.vault.root
    listing = listing_of(root)
    assert len(listing) > 100

    def taken(expected: bytearray | None) -> bytes | bytearray | None:
        scanahead.start(str(root))
        return scanahead.take(str(root), expected)

    same = bytearray(listing)
    assert taken(same) is same
    for other in (bytearray(listing[:-1]), bytearray(listing + b"x"), bytearray()):
        got = taken(other)
        assert got == listing and got is not other and isinstance(got, bytes)
    for at in (0, len(listing) // 2, len(listing) - 1):
        other = bytearray(listing)
        other[at] ^= 1
        got = taken(other)
        assert got == listing and got is not other
    assert taken(None) == listing


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


def test_no_listing_is_started_for_a_vault_without_an_index(
        project: Project, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """No manifest (a fresh clone, a deleted `.index/`): the first answer lists the notes by
    name, so a `find` started ahead would only be killed, its start paid by the search."""
    from ocm.cli import searching

    project.remember("Kafka consumer lag alarms fire at 10k", "gotcha")
    shutil.rmtree(project.vault.index_dir)
    started: list[str] = []
    real_start = scanahead.start
    monkeypatch.setattr(scanahead, "start", lambda root: (started.append(root),
                                                          real_start(root))[1])
    searching.run(query=("kafka",), vault=project.vault.root, as_json=True)
    assert started == []
    assert [h["title"] for h in json.loads(capsys.readouterr().out)] == [
        "Kafka consumer lag alarms fire at 10k"]
    # Once there is an index, the next search lists ahead again.
    searching.run(query=("kafka",), vault=project.vault.root, as_json=True)
    assert started == [str(project.vault.root)]


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


def _spy_confirm(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    said: list[bool] = []
    confirm = NoteIndex.confirm

    def spy(self: NoteIndex) -> bool:
        said.append(confirm(self))
        return said[-1]

    monkeypatch.setattr(NoteIndex, "confirm", spy)
    return said


def _ahead_search(root: Path, project: Project, query: str) -> list[dict]:
    """A one-shot search: a new Project, its notes listed ahead."""
    scanahead.start(str(root))
    return [hit.to_json() for hit in Project.open(cwd=project.root).search(query)]


def _after_check(project: Project, query: str) -> list[dict]:
    """The same search by a process that checks the notes first (no listing ahead)."""
    return [hit.to_json() for hit in Project.open(cwd=project.root).search(query)]


def test_a_search_runs_while_the_listing_is_taken_and_stands_when_nothing_changed(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embed.SEMANTIC_ENV, "1")
    project.remember("Kafka consumer lag alarms fire at 10k", "gotcha")
    project.search("kafka")
    project.index_for(project.vault).close()
    root = project.vault.root
    said = _spy_confirm(monkeypatch)
    first = _ahead_search(root, project, "kafka lag")  # records the listing
    assert first and said == []  # nothing recorded yet: checked first, as before

    def no_sync(self: NoteIndex, *args: object, **kwargs: object) -> None:
        raise AssertionError("the listing matched: the search stands, no check after it")

    with monkeypatch.context() as patch:
        patch.setattr(NoteIndex, "sync", no_sync)
        patch.setattr(NoteIndex, "_scan", no_sync)
        patch.setattr(Manifest, "load", no_sync)
        assert _ahead_search(root, project, "kafka lag") == first
    assert said == [True]
    assert scanahead.take(str(root)) is None


def test_without_memory_files_a_search_checks_first_as_before(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.remember("Kafka consumer lag alarms fire at 10k", "gotcha")
    project.search("kafka")
    project.index_for(project.vault).close()
    root = project.vault.root
    _ahead_search(root, project, "kafka")  # records the listing
    monkeypatch.delattr(os, "memfd_create")  # not Linux: no listing is started
    said = _spy_confirm(monkeypatch)
    assert _ahead_search(root, project, "kafka") == _after_check(project, "kafka")
    assert said == []


def test_a_find_that_failed_at_once_is_not_searched_ahead_of(
        project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    project.remember("Kafka consumer lag alarms fire at 10k", "gotcha")
    project.search("kafka")
    project.index_for(project.vault).close()
    root = project.vault.root
    _ahead_search(root, project, "kafka")  # records the listing
    # A `find` that does not know -printf (busybox) refuses its arguments and exits.
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "find").write_text("#!/bin/sh\nexit 1\n")
    (fake / "find").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    said = _spy_confirm(monkeypatch)
    scanahead.start(str(root))
    scanahead._AHEAD[str(root)].wait()
    assert not scanahead.started(str(root))
    assert [h.to_json() for h in Project.open(cwd=project.root).search("kafka")] == (
        _after_check(project, "kafka"))
    assert said == [] and scanahead.take(str(root)) is None


@pytest.mark.parametrize("change", ["edited", "added", "deleted"])
def test_a_search_ahead_of_a_changed_vault_is_the_search_after_the_check(
        project: Project, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    monkeypatch.setenv(embed.SEMANTIC_ENV, "1")
    for text in ("Kafka consumer lag alarms fire at 10k", "Kafka topics keep seven days",
                 "Postgres vacuum runs nightly"):
        project.remember(text, "gotcha")
    project.search("kafka")
    project.index_for(project.vault).close()
    root = project.vault.root
    _ahead_search(root, project, "kafka")  # records the listing
    said = _spy_confirm(monkeypatch)
    notes = sorted((root / "memories").rglob("*.md"))
    kafka = next(p for p in notes if "lag" in p.read_text())
    if change == "edited":  # in place: same size, 1 ns later
        before = kafka.stat()
        kafka.write_text(kafka.read_text().replace("Kafka", "Kafkb"))
        os.utime(kafka, ns=(before.st_atime_ns, before.st_mtime_ns + 1))
    elif change == "added":  # written by hand, not through ocm
        text = kafka.read_text().replace("lag alarms", "rebalance storms")
        (kafka.parent / "zz-hand-written.md").write_text(
            text.replace(f"id: {kafka.stem}", "id: zz-hand-written"))
    else:
        kafka.unlink()
    found = _ahead_search(root, project, "kafka")
    assert said == [False]
    titles = [hit["title"] for hit in found]
    if change == "edited":
        assert not any("lag" in t for t in titles)
        assert [h["title"] for h in _ahead_search(root, project, "kafkb")] == [
            "Kafkb consumer lag alarms fire at 10k"]
    elif change == "added":
        assert any("rebalance" in t for t in titles) and any("lag" in t for t in titles)
    else:
        assert titles == ["Kafka topics keep seven days"]
    assert found == _after_check(project, "kafka")


def test_a_commit_during_a_search_ahead_sends_it_through_the_check(
        project: Project) -> None:
    project.remember("Kafka consumer lag alarms fire at 10k", "gotcha")
    project.search("kafka")
    project.index_for(project.vault).close()
    root = project.vault.root
    _ahead_search(root, project, "kafka")  # records the listing
    index = NoteIndex(project.vault)
    scanahead.start(str(root))
    assert index.presume()
    index.searcher()
    other = Project.open(cwd=project.root)  # another process commits meanwhile
    other.remember("Kafka brokers need rack awareness", "gotcha")
    other.search("kafka")
    assert not index.confirm()
    index.sync()
    assert index.searcher().doc_count() == 2


def test_ocm_search_processes_see_every_change_between_two_searches(
        project: Project, run_ocm, monkeypatch: pytest.MonkeyPatch) -> None:
    # One clock for the `ocm` process and the search here that its hits are compared with:
    # a hit's decay follows its age to the second, so a second between the two (a loaded
    # machine) moved a score's last digit.
    monkeypatch.setenv("OCM_NOW", "2026-11-27T09:00:00")
    for text in ("Kafka consumer lag alarms fire at 10k", "Kafka topics keep seven days",
                 "Kafka brokers need rack awareness"):
        run_ocm("remember", text, "--type", "gotcha")

    def search(query: str) -> list[dict]:
        found = json.loads(run_ocm("search", "--json", query).stdout)
        assert found == json.loads(json.dumps(_after_check(project, query), default=str))
        return found

    def titles(query: str) -> list[str]:
        return sorted(hit["title"] for hit in search(query))

    assert len(titles("kafka")) == 3  # the first check records the listing
    assert len(titles("kafka")) == 3  # searched ahead of the listing, which matched
    notes = {p.read_text().split("title: ")[1].split("\n")[0]: p
             for p in (project.vault.root / "memories").rglob("*.md")}
    lag = notes["Kafka consumer lag alarms fire at 10k"]
    before = lag.stat()
    with open(lag, "r+", encoding="utf-8") as handle:  # an editor's save in place
        handle.write(lag.read_text().replace("lag alarms", "lag pagers"))
    os.utime(lag, ns=(before.st_atime_ns, before.st_mtime_ns + 1))
    assert titles("alarms") == [] and titles("pagers") == [
        "Kafka consumer lag pagers fire at 10k"]
    topics = notes["Kafka topics keep seven days"]
    (topics.parent / "by-hand.md").write_text(
        topics.read_text().replace(f"id: {topics.stem}", "id: by-hand")
        .replace("seven days", "three replicas"))
    assert titles("replicas") == ["Kafka topics keep three replicas"]
    notes["Kafka brokers need rack awareness"].unlink()
    assert titles("kafka") == ["Kafka consumer lag pagers fire at 10k",
                               "Kafka topics keep seven days",
                               "Kafka topics keep three replicas"]
    assert titles("rack") == []
    assert len(titles("kafka")) == 3


def test_other_files_in_the_note_folders_are_listed_but_never_notes(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """find lists every regular file (a `-name` test on each cost more than the rest of its
    work); the notes are picked out after. A listing with an editor's swap file and a
    text file still vouches for the index; a change to such a file alone only sends the
    search through the check, which finds the notes as they were."""
    project.remember("Kafka consumer lag alarms fire at 10k", "gotcha")
    project.search("kafka")
    project.index_for(project.vault).close()
    root = project.vault.root
    folder = next((root / "memories").rglob("*.md")).parent
    (folder / ".kafka.md.swp").write_text("swap")
    (folder / "notes.txt").write_text("not a note")
    listing = listing_of(root)
    assert b".kafka.md.swp" in listing and b"notes.txt" in listing
    assert scanahead.signatures(listing) == Vault(root).note_signatures()

    def search(query: str) -> list[str]:
        scanahead.start(str(root))
        return [hit.title for hit in Project.open(cwd=project.root).search(query)]

    assert search("kafka")  # records the listing
    with monkeypatch.context() as patch:
        patch.setattr(NoteIndex, "_scan", lambda self, full=False: pytest.fail("scanned"))
        assert search("kafka") == ["Kafka consumer lag alarms fire at 10k"]
    (folder / ".kafka.md.swp").write_text("swap, longer now")
    assert search("kafka") == ["Kafka consumer lag alarms fire at 10k"]
