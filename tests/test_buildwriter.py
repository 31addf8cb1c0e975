"""A rebuild's BuildWriter writes the files Whoosh's SegmentWriter writes: byte for byte
with zlib's deflate, the same contents with ISA-L's (the default, ocm/indexer/buildcodec.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from whoosh import index
from whoosh.codec.whoosh3 import W3Codec
from whoosh.fields import TEXT, Schema

from ocm.indexer.buildcodec import BuildCodec
from ocm.indexer.buildwriter import BuildWriter
from ocm.indexer.schema import build_schema

from .test_buildcodec import ZLIB, _docs, assert_same_index


def _files(folder: Path) -> dict[str, bytes]:
    # Segment files are named MAIN_<random segment id>.<part>: compare by part.
    return {path.name.split(".", 1)[1]: path.read_bytes() for path in folder.iterdir()
            if path.name.startswith("MAIN_") and path.suffix in (".trm", ".pst", ".col")}


def _stock(folder: Path, docs: list[dict]) -> dict[str, bytes]:
    folder.mkdir()
    writer = index.create_in(str(folder), build_schema()).writer(codec=W3Codec(),
                                                                 compound=False)
    for doc in docs:
        writer.add_document(**doc)
    writer.commit()
    return _files(folder)


def _built(folder: Path, docs: list[dict], zlib: bool = False) -> dict[str, bytes]:
    """The files of a build of `docs`, deflated by zlib (Whoosh's) or the default (ISA-L)."""
    folder.mkdir()
    codec = {"codec": BuildCodec(deflate=ZLIB)} if zlib else {}
    writer = BuildWriter(index.create_in(str(folder), build_schema()), compound=False, **codec)
    for doc in docs:
        writer.add_document(**doc)
    writer.commit_parts([])
    return _files(folder)


def _as_stock(tmp_path: Path, docs: list[dict]) -> dict[str, bytes]:
    """SegmentWriter's files of `docs` (in tmp_path/stock), after checking that a build
    writes them byte for byte with zlib (tmp_path/zlib) and the same contents with the
    default deflate (tmp_path/build)."""
    stock = _stock(tmp_path / "stock", docs)
    assert _built(tmp_path / "zlib", docs, zlib=True) == stock
    assert_same_index(tmp_path / "build", tmp_path / "stock", _built(tmp_path / "build", docs),
                      stock)
    return stock


# 300 documents put some terms over the 128-posting block limit (several blocks).
@pytest.mark.parametrize("count", [1, 7, 300])
def test_same_bytes_as_segment_writer(tmp_path: Path, count: int) -> None:
    stock = _as_stock(tmp_path, _docs(count))
    assert {"trm", "pst", "_body_len.col", "date.col"} <= set(stock)


def test_same_bytes_taking_terms_a_few_at_a_time(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The runs of terms taken out of the sorted postings together change no byte at
    their bounds: tiny runs."""
    import ocm.indexer.buildwriter as buildwriter

    monkeypatch.setattr(buildwriter, "_TERMS_AT_ONCE", 3)
    _as_stock(tmp_path, _docs(300))


def test_parts_commit_as_consecutive_segments(tmp_path: Path) -> None:
    docs = _docs(40)
    ix = index.create_in(str(tmp_path), build_schema())
    first = BuildWriter(ix, compound=False)
    second = BuildWriter(ix, compound=False, _lk=False)
    for doc in docs[20:]:
        second.add_document(**doc)
    part = second.finish_part()
    for doc in docs[:20]:
        first.add_document(**doc)
    first.commit_parts([part])
    with index.open_dir(str(tmp_path)).searcher() as searcher:
        assert [s["path"] for s in searcher.all_stored_fields()] == [d["path"] for d in docs]
        assert searcher.doc_count() == 40


def test_refuses_fields_it_cannot_index(tmp_path: Path) -> None:
    ix = index.create_in(str(tmp_path), Schema(body=TEXT(vector=True)))
    with pytest.raises(ValueError, match="body"):
        BuildWriter(ix)


def test_same_bytes_at_block_bounds(tmp_path: Path) -> None:
    """Terms with exactly one and two full blocks of postings (the last block's length is
    written negative), one over, and a term whose postings all weigh the same: the blocks,
    term infos and terms rows a build makes itself are Whoosh's."""
    docs = _docs(257)
    for i, doc in enumerate(docs):
        doc["files"] = " ".join(word for word, every in (("zulu", 1), ("kilo", 2), ("xray", 3))
                                if i < 256 and not i % every) + " " + doc["files"]
        doc["goal"] = "limit " * (1 + i % 5) + doc["goal"]
    _as_stock(tmp_path, docs)
    with index.open_dir(str(tmp_path / "build")).reader() as reader:
        assert [reader.doc_frequency("files", word) for word in ("zulu", "kilo", "xray")] \
            == [256, 128, 86]


def test_terms_file_hash_tables_match_whooshs(tmp_path: Path) -> None:
    """Many terms (buckets with collisions in their open-addressed tables): the terms file,
    its hash tables and directory included, byte for byte, and every term found."""
    docs = [{"path": f"n{i}.md", "body": " ".join(f"w{i}x{j}" for j in range(40))}
            for i in range(60)]
    _as_stock(tmp_path, docs)
    with index.open_dir(str(tmp_path / "build")).searcher() as searcher:
        assert all(searcher.document_number(body=f"w{i}x{j}") == i
                   for i in range(60) for j in (0, 39))


def test_build_codec_never_inlines_postings() -> None:
    with pytest.raises(ValueError, match="blocks"):
        BuildCodec(inlinelimit=2)


def test_per_document_values_written_as_segment_writer_writes_them(tmp_path: Path) -> None:
    """A document's stored fields, lengths and columns go straight to their writers
    (`BuildWriter.add_document`): fields first met late (their columns created mid-way, in
    the order Whoosh creates them), values left out or None, empty texts, and Whoosh's own
    keywords (`_stored_<name>`, boosts) keep SegmentWriter's bytes; an unknown field is
    refused before anything of its document is written."""
    from whoosh.fields import UnknownFieldError

    docs = _docs(40, seed=5)
    for i, doc in enumerate(docs):
        if i >= 3:  # columns and stored fields first met at the fourth document
            doc["chunks"] = [("Goal", 2, i, "goal", "goal", f"text {i}", 2)] * (i % 3)
            doc["rankfields"] = b"" if i % 4 else bytes(range(i % 7))
            doc["sig"] = [i, i * 7]
        if i % 5 == 1:
            doc["body"] = None
            doc["meta"] = None
        if i % 6 == 2:
            doc["_stored_path"] = f"shown/{i}.md"
            doc["_goal_boost"] = 3.0
        if i % 9 == 4:
            del doc["date"]
            doc["goal"] = ""
    stock = _stock(tmp_path / "stock", docs)
    assert {"_stored.col", "chunks.col", "rankfields.col", "_goal_len.col"} <= set(stock)
    for name, codec in (("zlib", {"codec": BuildCodec(deflate=ZLIB)}), ("build", {})):
        folder = tmp_path / name
        folder.mkdir()
        writer = BuildWriter(index.create_in(str(folder), build_schema()), compound=False,
                             **codec)
        for i, doc in enumerate(docs):
            if i == 10:
                with pytest.raises(UnknownFieldError):
                    writer.add_document(**doc, nosuch="x")
            writer.add_document(**doc)
        writer.commit_parts([])
    assert _files(tmp_path / "zlib") == stock
    assert_same_index(folder, tmp_path / "stock", _files(folder), stock)
    texts = ("goal", "body", "files", "content", "tags")
    with index.open_dir(str(folder)).searcher() as searcher, \
            index.open_dir(str(tmp_path / "stock")).searcher() as theirs:
        assert searcher.stored_fields(2)["path"] == "shown/2.md"
        assert searcher.doc_count() == 40
        assert [searcher.reader().field_length(name) for name in texts] \
            == [theirs.reader().field_length(name) for name in texts]
