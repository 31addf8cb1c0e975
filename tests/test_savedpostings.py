"""Saved postings: what the writer saves beside a segment is what decoding its blocks gives,
for every term, and a missing or damaged file only means decoding again (same scores)."""

from __future__ import annotations

import struct
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from whoosh import index

from ocm.indexer import postings, savedpostings
from ocm.indexer.buildcodec import BuildCodec
from ocm.indexer.hits import Filters
from ocm.indexer.savedpostings import EXT, SavedPostings, term_key
from ocm.indexer.schema import build_schema
from ocm.project import Project

from .test_buildcodec import _docs
from .test_postings import QUERIES, _ours, _whoosh, vault_project  # noqa: F401 - fixture

pytestmark = pytest.mark.usefixtures("keyword_only")


def _saved_files(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"*.{EXT}"))


def _segments(folder: Path, *segments: list[dict]) -> index.Index:
    """A real index in `folder` with one segment per list of documents, each committed
    through the build codec without merging."""
    ix = index.create_in(str(folder), build_schema())
    for docs in segments:
        writer = ix.writer(codec=BuildCodec(), compound=False)
        for doc in docs:
            writer.add_document(**doc)
        writer.commit(merge=False)
    return ix


def _every_term_as_decoded(reader: Any, saved: SavedPostings) -> dict[str, list[list[int]]]:
    """Asserts that every term of the segment is found in `saved` with the ids and weights
    `_decode` reads from Whoosh's blocks; those ids, per field, term after term."""
    decoded: dict[str, list[list[int]]] = {}
    for field, tbytes in reader.all_terms():
        matcher = reader._terms.matcher(field, tbytes, reader.schema[field].format)
        ids, weights = postings._decode(matcher)
        found = saved.find(term_key(field, tbytes))
        assert found is not None, (field, tbytes)
        assert found[0].tolist() == ids.tolist(), (field, tbytes)
        assert found[1].tobytes() == weights.tobytes(), (field, tbytes)
        decoded.setdefault(field, []).append(ids.tolist())
    return decoded


@pytest.mark.parametrize("at_once", [savedpostings._PAIRED_AT_ONCE, 7, 1])
def test_every_term_saved_as_decoded(tmp_path: Path, at_once: int,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Terms of one posting, of one block and of several (300 documents), in every field,
    and a second segment written by a later commit: ids and weights equal `_decode`'s,
    whether the writer puts each term's ids and weights side by side all at once or a few
    postings at a time (a term of more postings than that in a run of its own)."""
    monkeypatch.setattr(savedpostings, "_PAIRED_AT_ONCE", at_once)
    ix = _segments(tmp_path, _docs(300), _docs(40, seed=5))
    assert len(_saved_files(tmp_path)) == 2
    assert not list(tmp_path.glob("*.tmp"))
    with ix.searcher() as searcher:
        leaves = searcher.ixreader.leaf_readers()
        assert len(leaves) == 2
        lengths = set()
        for reader, _ in leaves:
            saved = SavedPostings.open(reader)
            assert saved is not None
            decoded = _every_term_as_decoded(reader, saved)
            lengths.update(len(ids) for terms in decoded.values() for ids in terms)
            assert sum(map(len, decoded.values())) > 100
            assert saved.find(term_key("body", b"no-such-term")) is None
        assert 1 in lengths and max(lengths) > 128  # one posting and several blocks


def test_merged_segment_saved_and_dead_ones_removed(tmp_path: Path) -> None:
    ix = _segments(tmp_path, _docs(30), _docs(30, seed=9))
    writer = ix.writer(codec=BuildCodec(), compound=False)
    writer.commit(optimize=True)  # one segment, written from the other two
    (only,) = _saved_files(tmp_path)
    with ix.searcher() as searcher:
        (reader, _), = searcher.ixreader.leaf_readers()
        assert only.name == reader._segment.make_filename("." + EXT)
        saved = SavedPostings.open(reader)
        assert saved is not None
        matcher = reader._terms.matcher("body", b"alpha", reader.schema["body"].format)
        found = saved.find(term_key("body", b"alpha"))
        assert found is not None and found[0].tolist() == postings._decode(matcher)[0].tolist()


def _scores(project: Project) -> dict[str, list[tuple[int, float]]]:
    index = project.refresh(project.vault)
    return {text: _ours(index, text, Filters()) for text in QUERIES}


@pytest.mark.parametrize("damage", ["missing", "truncated", "other segment", "garbage"])
def test_missing_or_damaged_file_decodes_the_blocks(
        vault_project: Project, damage: str, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    index = vault_project.refresh(vault_project.vault)
    expected = {text: _whoosh(index, text, Filters()) for text in QUERIES}
    assert _scores(vault_project) == expected
    folder = Path(index.vault.root) / ".index"
    files = _saved_files(folder)
    assert len(files) >= 2
    index.close()
    first, second = files[0], files[1]
    if damage == "missing":
        first.unlink()
    elif damage == "truncated":
        first.write_bytes(first.read_bytes()[:-3])
    elif damage == "other segment":
        first.write_bytes(second.read_bytes())
    else:
        first.write_bytes(b"\x00" * 200)
    decoded = []
    real = postings.SegmentCache._decoded

    def spy(self, reader, segment, field, tbytes):
        decoded.append(segment)
        return real(self, reader, segment, field, tbytes)

    monkeypatch.setattr(postings.SegmentCache, "_decoded", spy)
    assert _scores(vault_project) == expected
    assert decoded and set(decoded) == {first.name.split(".")[0]}


def test_saved_postings_are_used(vault_project: Project,  # noqa: F811
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args):
        raise AssertionError("decoded although the segment saved its postings")

    index = vault_project.refresh(vault_project.vault)
    index.close()
    monkeypatch.setattr(postings.SegmentCache, "_decoded", refuse)
    index = vault_project.refresh(vault_project.vault)
    for text in QUERIES:
        assert _ours(index, text, Filters()) == _whoosh(index, text,
                                                                 Filters())


def test_keys_of_one_hash_told_apart_by_their_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Terms whose key hashes are equal (here: all in three hashes) are found by their
    bytes, and terms the segment does not hold are not."""
    monkeypatch.setattr(savedpostings, "zlib", SimpleNamespace(crc32=lambda key: len(key) % 3))
    ix = index.create_in(str(tmp_path), build_schema())
    writer = ix.writer(codec=BuildCodec(), compound=False)
    for doc in _docs(60):
        writer.add_document(**doc)
    writer.commit()
    with ix.searcher() as searcher:
        (reader, _), = searcher.ixreader.leaf_readers()
        saved = SavedPostings.open(reader)
        assert saved is not None
        for field, tbytes in reader.all_terms():
            matcher = reader._terms.matcher(field, tbytes, reader.schema[field].format)
            found = saved.find(term_key(field, tbytes))
            assert found is not None
            assert found[0].tolist() == postings._decode(matcher)[0].tolist()
        assert saved.find(term_key("body", b"zzz-absent")) is None


def test_postings_are_read_not_mapped_and_still_read_once_the_file_is_deleted(
        vault_project: Project, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A term's arrays own their memory (a mapped file's pages would stay in the process's
    resident memory for as long as it runs). A merge in another process may delete a
    segment's file while a searcher still reads that segment: its open file still answers,
    with the same scores and no decoding."""
    index = vault_project.refresh(vault_project.vault)
    expected = {text: _whoosh(index, text, Filters()) for text in QUERIES}
    reader, _ = index.searcher().ixreader.leaf_readers()[0]
    saved = SavedPostings.open(reader)
    assert saved is not None
    field, tbytes = next(iter(reader.all_terms()))
    found = saved.find(term_key(field, tbytes))
    assert found is not None
    ids, weights = found
    assert isinstance(ids.base, bytes) and isinstance(weights.base, bytes)  # read, not mapped
    assert not ids.flags.writeable and not weights.flags.writeable
    index.close()
    index = vault_project.refresh(vault_project.vault)
    scorer = index.scorer()
    for reader, _ in scorer.searcher.ixreader.leaf_readers():
        scorer.cache.postings(reader, "body", "no-such-term")  # opens every segment's file
    files = _saved_files(Path(index.vault.root) / ".index")
    assert files
    for path in files:
        path.unlink()

    def refuse(*_args):
        raise AssertionError("decoded although the segment's file was open")

    monkeypatch.setattr(postings.SegmentCache, "_decoded", refuse)
    assert {text: _ours(index, text, Filters()) for text in QUERIES} == expected


def test_postings_read_without_pread_are_the_same(
        vault_project: Project, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Where `os.pread` does not exist (Windows) the file is read at a position under a
    lock: the same arrays."""
    index = vault_project.refresh(vault_project.vault)
    reader, _ = index.searcher().ixreader.leaf_readers()[0]
    saved = SavedPostings.open(reader)
    assert saved is not None
    terms = [term_key(field, tbytes) for field, tbytes in reader.all_terms()][:300]
    with_pread = [saved.find(key) for key in terms]
    read = []
    monkeypatch.setattr(savedpostings, "_PREAD", None)
    monkeypatch.setattr(saved._handle, "read", lambda size: read.append(size) or (
        type(saved._handle).read(saved._handle, size)), raising=False)
    without = [saved.find(key) for key in terms]
    assert len(read) == len(terms)  # one read a term, through the handle
    assert all(found is not None for found in with_pread)
    assert [(i.tobytes(), w.tobytes()) for i, w in with_pread] == [
        (i.tobytes(), w.tobytes()) for i, w in without]


def test_a_failed_save_leaves_no_partial_file(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def full_disk(*_args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(savedpostings.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space"):
        _segments(tmp_path, _docs(30))
    assert not list(tmp_path.glob(f"*.{EXT}*"))


def _ids_apart(path: Path) -> None:
    """Rewrite a saved-postings file in the first layout (MAGIC_IDS_APART): every term's
    ids, then every term's weights, where the writer now puts each term's side by side."""
    data = path.read_bytes()
    terms, count, _ = struct.unpack_from("<qqq", data, len(savedpostings.MAGIC) + 32)
    table = 4 * terms + -(4 * terms) % 8
    starts_at = savedpostings._HEADER + 2 * table
    at = starts_at + 2 * 8 * (terms + 1)
    starts = np.frombuffer(data, dtype="<i8", count=terms + 1, offset=starts_at)
    words = np.frombuffer(data, dtype="<u4", count=2 * count, offset=at)
    counts = np.diff(starts)
    ids = words[np.arange(count) + np.repeat(starts[:-1], counts)]
    weights = words[np.arange(count) + np.repeat(starts[1:], counts)]
    pad = bytes(-(4 * count) % 8)
    path.write_bytes(savedpostings.MAGIC_IDS_APART + data[len(savedpostings.MAGIC):at]
                     + ids.tobytes() + pad + weights.tobytes() + pad + data[at + 8 * count:])


def test_a_file_of_the_first_layout_is_read_as_it_is(tmp_path: Path) -> None:
    """An index saved before each term's ids and weights were side by side (all ids, then
    all weights) keeps its saved postings: every term and every field's run of terms read
    from them equal Whoosh's; one cut short in that layout is not used."""
    ix = _segments(tmp_path, _docs(300), _docs(40, seed=5))
    for path in _saved_files(tmp_path):
        _ids_apart(path)
    with ix.searcher() as searcher:
        for reader, _ in searcher.ixreader.leaf_readers():
            saved = SavedPostings.open(reader)
            assert saved is not None and saved._apart
            decoded = _every_term_as_decoded(reader, saved)
            for field in ("path", "body"):
                _, ids, starts = saved.field_terms(field)
                assert ids.tolist() == [n for found in decoded[field] for n in found]
                assert starts.tolist() == np.cumsum(
                    [0] + [len(found) for found in decoded[field]]).tolist()
        first = _saved_files(tmp_path)[0]
        first.write_bytes(first.read_bytes()[:-8])
        cut = [reader for reader, _ in searcher.ixreader.leaf_readers()
               if reader._segment.make_filename("." + EXT) == first.name]
        assert len(cut) == 1 and SavedPostings.open(cut[0]) is None
