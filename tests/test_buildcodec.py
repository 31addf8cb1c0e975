"""BuildCodec must write the files W3Codec writes (byte for byte with zlib's deflate; with
ISA-L's, the same contents), and segments readable as W3Codec."""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import pytest
from whoosh import index
from whoosh.codec.whoosh3 import W3Codec
from whoosh.filedb.filestore import FileStorage, RamStorage

import ocm.indexer.buildcodec as buildcodec
from ocm.indexer.buildcodec import BuildCodec
from ocm.indexer.schema import build_schema

WORDS = ["alpha", "beta", "gamma", "delta", "embedding_server.py", "src/api/client.py",
         "RateLimiter", "retry", "timeout", "cache", "postgres", "the", "of", "C++", "utf-8",
         "x86_64"]


def _docs(count: int, seed: int = 3) -> list[dict]:
    rng = random.Random(seed)

    def text(lo: int, hi: int) -> str:
        return " ".join(rng.choice(WORDS) + str(rng.randrange(4) or "")
                        for _ in range(rng.randint(lo, hi)))

    return [{"path": f"n{i}.md", "id": f"id{i}", "kind": "session", "date": 1_700_000_000 + i,
             "goal": text(0, 12), "body": text(0, 400), "files": text(0, 3),
             "content": "" if i % 3 else text(5, 50), "tags": "db,api" if i % 2 else "",
             "meta": {"n": i}} for i in range(count)]


# Whoosh's own deflate (zlib, level 3): a BuildCodec given it writes W3Codec's bytes.
ZLIB = (zlib.compress, 3)
# The segment files with deflated data in them: the postings, the terms file (whose extents
# point into the postings) and the compressed columns.
DEFLATED = {"pst", "trm", "_stored.col", "chunks.col"}


def _decoded(folder: Path) -> dict:
    """What an index's segment reads as through Whoosh (zlib.decompress): every term's
    info and postings, every document's stored fields and column values."""
    ix = index.open_dir(str(folder))
    with ix.reader() as reader:
        terms = {}
        for fieldname, text in reader.all_terms():
            info = reader.term_info(fieldname, text)
            matcher = reader.postings(fieldname, text)
            postings = []
            while matcher.is_active():
                postings.append((matcher.id(), matcher.weight(), matcher.value()))
                matcher.next()
            terms[fieldname, text] = (
                info.weight(), info.doc_frequency(), info.min_length(), info.max_length(),
                info.max_weight(), info.min_id(), info.max_id(), postings)
        # (by doc number: a compressed column's iterator inflates a missing value's b"")
        columns = {name: list(map(reader.column_reader(name).__getitem__,
                                  range(reader.doc_count_all())))
                   for name in ix.schema.names() if reader.has_column(name)}
        return {"terms": terms, "stored": list(reader.all_stored_fields()),
                "columns": columns}


def assert_same_index(folder: Path, stock_folder: Path, files: dict[str, bytes],
                      stock: dict[str, bytes]) -> None:
    """The segment in `folder` (its files `files`, as `_build` returns them) is the one in
    `stock_folder` but for how its data was deflated: the same files, those without
    deflated data byte for byte, and the same postings, term infos, stored fields and
    columns read back."""
    assert set(files) == set(stock)
    assert {name: data for name, data in files.items() if name not in DEFLATED} \
        == {name: data for name, data in stock.items() if name not in DEFLATED}
    made, theirs = _decoded(folder), _decoded(stock_folder)
    assert made["terms"] and made["stored"]
    assert made == theirs


def _build(folder: Path, codec, docs: list[dict]) -> dict[str, bytes]:
    folder.mkdir()
    ix = index.create_in(str(folder), build_schema())
    writer = ix.writer(codec=codec, compound=False)
    for doc in docs:
        writer.add_document(**doc)
    writer.commit()
    # Segment files are named MAIN_<random segment id>.<part>: compare by part.
    return {path.name.split(".", 1)[1]: path.read_bytes() for path in folder.iterdir()
            if path.name.startswith("MAIN_") and path.suffix in (".trm", ".pst", ".col")}


# 300 documents put some terms over the 128-posting block limit (several blocks).
@pytest.mark.parametrize("count", [1, 7, 300])
def test_same_bytes_as_w3codec(tmp_path: Path, count: int) -> None:
    docs = _docs(count)
    stock = _build(tmp_path / "stock", W3Codec(), docs)
    bulk = _build(tmp_path / "bulk", BuildCodec(deflate=ZLIB), docs)
    assert {"trm", "pst", "_body_len.col"} <= set(stock)
    assert bulk == stock
    assert_same_index(tmp_path / "isal", tmp_path / "stock",
                      _build(tmp_path / "isal", BuildCodec(), docs), stock)


def test_isal_deflate_writes_zlib_streams(tmp_path: Path) -> None:
    """ISA-L's deflate (the default) writes other bytes than zlib's, in blocks and columns
    that zlib.decompress reads: the stored fields of every document, the postings of a
    term in several (compressed) blocks."""
    docs = _docs(300)
    stock = _build(tmp_path / "stock", W3Codec(), docs)
    files = _build(tmp_path / "isal", BuildCodec(), docs)
    assert all(files[name] != stock[name] for name in ("pst", "_stored.col"))
    with index.open_dir(str(tmp_path / "isal")).reader() as reader, \
            index.open_dir(str(tmp_path / "stock")).reader() as theirs:
        assert [fields["meta"] for fields in reader.all_stored_fields()] \
            == [doc["meta"] for doc in docs]
        _, word = max(reader.most_frequent_terms("body", 1))
        assert reader.doc_frequency("body", word) > 128  # several blocks
        assert list(reader.postings("body", word).items_as("frequency")) \
            == list(theirs.postings("body", word).items_as("frequency"))


def test_segments_name_the_stock_codec(tmp_path: Path) -> None:
    _build(tmp_path / "ix", BuildCodec(), _docs(20))
    ix = FileStorage(str(tmp_path / "ix")).open_index()
    segments = ix._read_toc().segments
    assert segments and all(type(s.codec()) is W3Codec for s in segments)
    with ix.searcher() as searcher:
        assert searcher.doc_count() == 20


def _term_files(terms: list, lengths: object = None) -> dict[str, bytes]:
    """The postings and terms files BuildCodec writes for these (field, term, docnums,
    weights, values) in RAM."""
    storage = RamStorage()
    codec = BuildCodec()
    segment = codec.new_segment(storage, "MAIN")
    writer = codec.field_writer(storage, segment)
    writer.add_terms(build_schema(), lengths, iter(terms))
    writer.close()
    return {name.rsplit(".", 1)[1]: storage.open_file(name).read()
            for name in storage.list() if name.rsplit(".", 1)[1] in ("pst", "trm")}


class _Lengths:
    """Every document's length 0..299 in every field (as a segment's length reader)."""

    def doc_count_all(self) -> int:
        return 70_000

    def doc_field_length_reader(self, fieldname: str):
        return lambda docnum: docnum % 300


@pytest.mark.parametrize("lengths", [None, _Lengths()])
def test_one_posting_terms_are_blocks_bytes(monkeypatch: pytest.MonkeyPatch,
                                            lengths: object) -> None:
    """A one-posting term made of its pieces (the doc number spliced in) is the block and
    term info `_blocks` makes for it, at every size a doc number pickles to (1, 2, 4 and 5
    bytes), with and without weights, values and field lengths."""
    docnums = [0, 1, 255, 256, 300, 65_535, 65_536, 69_999]
    if lengths is None:  # (a segment with lengths has as many documents as they have)
        docnums += [2**31 - 1, 2**31, 2**32 - 1]
    terms = [(field, f"t{i:03d}".encode(), [docnum], [weight], [value])
             for field, value in (("body", b"\x00\x00\x00\x02"), ("date", b""),
                                  ("tags", b"\x00\x00\x00\x01"))
             for i, (docnum, weight) in enumerate((d, w) for d in docnums
                                                  for w in (1.0, 2.5, 0.0))]
    made = _term_files(terms, lengths)
    monkeypatch.setattr(buildcodec.BulkFieldWriter, "_single_of", lambda self, *key: None)
    assert made == _term_files(terms, lengths)
    assert len(made["pst"]) > 50 * len(terms)


def test_columns_of_another_compressor_keep_it(tmp_path: Path) -> None:
    """Only zlib-compressed columns are deflated by the codec's deflate: a column that
    names another module (read back by that module's decompress) is written by it."""
    from whoosh.columns import CompressedBytesColumn, PickleColumn
    from whoosh.fields import COLUMN, ID, Schema

    schema = Schema(path=ID(stored=True),
                    packed=COLUMN(PickleColumn(CompressedBytesColumn(module="bz2"))),
                    deflated=COLUMN(PickleColumn(CompressedBytesColumn())))
    ix = index.create_in(str(tmp_path), schema)
    writer = ix.writer(codec=BuildCodec(), compound=False)
    values = [{"n": i, "text": "word " * i} for i in range(30)]
    for i, value in enumerate(values):
        writer.add_document(path=f"n{i}.md", packed=value, deflated=value)
    writer.commit()
    with index.open_dir(str(tmp_path)).reader() as reader:
        for name in ("packed", "deflated"):
            column = reader.column_reader(name)
            assert [column[i] for i in range(30)] == values
    packed = next(tmp_path.glob("MAIN_*.packed.col")).read_bytes()
    assert packed.startswith(b"BZh")  # the first value's bz2 stream
