"""ocm/indexer/termtables.py: a term file opened with one read of its hash directory holds
what Whoosh's own reader holds, finds the same terms, and fails where Whoosh's fails."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from whoosh import fields
from whoosh.filedb import filetables
from whoosh.filedb.filestore import FileStorage

from ocm.indexer import index as ocm_index  # noqa: F401  (installs TermTable)
from ocm.indexer.termtables import TermTable

WHOOSH = TermTable.__bases__[0]  # Whoosh's OrderedHashReader


@pytest.fixture(scope="module")
def term_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[FileStorage, str]:
    folder = tmp_path_factory.mktemp("ix")
    storage = FileStorage(str(folder))
    ix = storage.create_index(fields.Schema(path=fields.ID(stored=True),
                                            body=fields.TEXT, tags=fields.KEYWORD))
    with ix.writer(compound=False) as writer:
        for n in range(400):
            writer.add_document(path=f"notes/{n}.md", body=f"word{n % 37} common w{n}",
                                tags=f"t{n % 5} shared")
    (name,) = [p.name for p in Path(folder).glob("*.trm")]
    return storage, name


def _opened(cls: type, storage: FileStorage, name: str) -> filetables.HashReader:
    return cls(storage.open_file(name), storage.file_length(name))


def test_whoosh_reads_term_files_as_term_tables(term_file: tuple[FileStorage, str]) -> None:
    storage, _ = term_file
    from whoosh.index import open_dir

    with open_dir(storage.folder).searcher() as searcher:
        assert all(isinstance(reader._terms._tindex, TermTable)  # type: ignore[attr-defined]
                   for reader, _ in searcher.reader().leaf_readers())


def test_the_same_directory_and_terms_as_whoosh(term_file: tuple[FileStorage, str]) -> None:
    storage, name = term_file
    ours, theirs = _opened(TermTable, storage, name), _opened(WHOOSH, storage, name)
    try:
        for attr in ("tables", "extras", "startofdata", "endofdata", "hashtype", "startoffset"):
            assert getattr(ours, attr) == getattr(theirs, attr), attr
        assert len(ours.tables) == 256 and any(count for _, count in ours.tables)
        keys = list(theirs.keys())
        assert len(keys) > 400 and list(ours.keys()) == keys
        for key in keys[::7] + [b"\x00\x01nothere"]:
            assert ours.get(key) == theirs.get(key)
            assert ours.closest_key(key) == theirs.closest_key(key)
    finally:
        ours.close()
        theirs.close()


def test_a_cut_directory_fails_as_whoosh_fails(term_file: tuple[FileStorage, str],
                                                tmp_path: Path) -> None:
    storage, name = term_file
    whole = Path(storage.folder, name).read_bytes()
    # The extras' length at the end points before the file's start: the directory is
    # read from a position that leaves fewer than its 3,072 bytes.
    cut = FileStorage(str(tmp_path))
    with cut.create_file(name) as out:
        out.write(whole[:-4] + struct.pack("!i", len(whole) - 4 - 100))
    failures = []
    for cls in (TermTable, WHOOSH):
        with pytest.raises(Exception) as raised:  # noqa: PT011 - the type is what is compared
            _opened(cls, cut, name)
        failures.append(raised.type)
    assert failures[0] is failures[1]
