"""A note's text is analysed once: a field made of sections its chunks analysed already takes
their terms (`CodeAnalyzer.joined`), and the index holds the very bytes it held when every
field was analysed whole."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from whoosh import index

from ocm.indexer.analysis import RECENT_TEXTS, CodeAnalyzer, code_analyzer, legacy_chain
from ocm.indexer.buildwriter import BuildWriter
from ocm.indexer.documents import memory_fields, session_fields, transcript_fields
from ocm.indexer.rankcolumn import add_row
from ocm.indexer.schema import build_schema
from ocm.vault.markdown import Document

# Pieces whose ends a token could be thought to cross a line break at: separators, `c#`,
# `c++`, a trailing `#` or `.`, non-ASCII, camelCase, stop words.
PIECES = ["c#", "C++", "x#", "#12", "a.", ".b", "src/api/", "/client.py", "utf-", "-8",
          "embedding_server", "RateLimiter", "naïve", "Straße", "the", "of", "::", "a::b",
          "  ", "\t", "", "x" * 90, "retrying", "v1.19", "PROJ-343", "0ed43cb", "#", "++"]


def _text(rng: random.Random, words: int) -> str:
    return "".join(rng.choice(PIECES) + rng.choice(["", " ", "\n", ".", "-", "/"])
                   for _ in range(words))


def test_joined_parts_give_the_terms_of_the_whole_text() -> None:
    rng = random.Random(5)
    chain = legacy_chain()
    for _ in range(300):
        parts = [_text(rng, rng.randint(0, 40)) for _ in range(rng.randint(1, 6))]
        analyzer = CodeAnalyzer()
        for part in parts[::2]:  # some parts' terms known already, some not
            analyzer.index_terms(part)
        text = analyzer.joined(parts)
        assert text == "\n".join(parts)
        expected = [t.text for t in chain(text, mode="index")]
        assert analyzer.index_terms(text) == expected
        assert CodeAnalyzer().index_terms(text) == expected


def test_recent_texts_drop_the_oldest_first() -> None:
    analyzer = CodeAnalyzer()
    texts = [f"text number {i} " + "words to make it long enough " * 4
             for i in range(RECENT_TEXTS + 1)]
    for text in texts:
        analyzer.index_terms(text)
    assert list(analyzer._recent) == texts[1:]


FILLER = ("The team reviewed the deployment_checklist and src/deploy/rollout.py together, "
          "then wrote down what everyone agreed on (C++ and C# builds, utf-8 logs). ")


def _session(rng: random.Random, i: int) -> str:
    def para(n: int) -> str:
        return " ".join(rng.choice(FILLER.split()) for _ in range(n))

    extra = "".join(f"\n## Notes {k}\n{para(rng.randint(0, 30))}\n"
                    f"{'### Sub ' + str(k) + chr(10) + para(12) + chr(10) if k % 3 else ''}"
                    f"{'#### Deeper' + chr(10) + para(9) + chr(10) if k % 4 == 1 else ''}"
                    for k in range(rng.choice([0, 1, 3, RECENT_TEXTS + 3])))
    lead = para(rng.randint(0, 20)) + "\n" if i % 2 else ""
    return f"""---
id: 2026-03-02_10-00_claude-code_s{i}
tool: claude-code
status: closed
started_at: 2026-03-02T10:00:00
slug: rework-{i}
---
{lead}
## Goal
{para(rng.randint(3, 40))}

## Todos

### ✅ Work Completed
- {para(8)}
- {para(30)}
  {para(5)}

### 🔲 Work To Be Completed
1. {para(6)}

## Files Touched

### Created
- `src/api/new_{i}.py`

### Modified
- `src/deploy/rollout.py`

## Work Done

{para(rng.randint(0, 120))}

---

## Architecture Decisions

- **Lock over a queue:** {para(15)}

### Why
{para(20)}
{extra}
## Q: why #2? | a^b [[x]]
{para(rng.randint(0, 50))}
"""


def _memory(rng: random.Random, i: int) -> str:
    body = " ".join(rng.choice(FILLER.split()) for _ in range(rng.randint(1, 90)))
    return f"""---
id: mem-{i}
type: gotcha
title: Kafka offsets {i}
created_at: 2026-03-02T10:00:00
---

{body}

## Why
{body[::-1]}
"""


def _transcript(rng: random.Random, i: int) -> str:
    turns = "".join(f"## User\n{FILLER * rng.randint(0, 3)}\n## Assistant\n{FILLER}\n"
                    for _ in range(rng.randint(1, 4)))
    return f"---\nid: t-{i}\nsession: s{i}\n---\n{turns}"


def _notes() -> list[tuple[str, str, str]]:
    rng = random.Random(11)
    out = []
    for i in range(60):
        kind = ("session", "memory", "transcript")[i % 3] if i % 5 else "session"
        make = {"session": _session, "memory": _memory, "transcript": _transcript}[kind]
        out.append((kind, str(i), make(rng, i)))
    return out


def _build(folder: Path) -> tuple[list[dict], dict[str, bytes]]:
    """Each note's fields made and added to a new segment in turn, as a build does (the
    terms a note's fields reuse are its own, just analysed); the fields and the files."""
    folder.mkdir()
    writer = BuildWriter(index.create_in(str(folder), build_schema()), compound=False)
    made = []
    for kind, name, text in _notes():
        doc = Document.parse(text)
        if kind == "session":
            fields = session_fields(doc, name)
        elif kind == "memory":
            fields = memory_fields(doc, name, "project")
        else:
            fields = transcript_fields(doc, name)
        fields.update(path=f"{kind}/{name}.md", sig=[1, 2])
        made.append(dict(fields))
        add_row(writer.schema, fields)
        writer.add_document(**fields)
    writer.commit_parts([])
    # Segment files are named MAIN_<random segment id>.<part>: compare by part.
    return made, {path.name.split(".", 1)[1]: path.read_bytes() for path in folder.iterdir()
                  if path.name.startswith("MAIN_") and path.suffix in (".trm", ".pst", ".col")}


def test_a_varied_vault_indexes_the_same_bytes_as_with_every_field_analysed_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code_analyzer().clean()
    once, built = _build(tmp_path / "once")
    assert any(len(d["body"]) > 2_000 for d in once if d["kind"] == "session")
    # Each field's text joined, and analysed whole by an analyzer that remembers no text.
    code_analyzer().clean()
    monkeypatch.setattr(CodeAnalyzer, "joined", lambda self, parts: "\n".join(parts))
    monkeypatch.setattr(CodeAnalyzer, "index_terms", CodeAnalyzer._index_terms)
    whole, stock = _build(tmp_path / "whole")
    assert once == whole
    assert {"trm", "pst", "_body_len.col", "chunks.col"} <= set(built)
    assert built == stock


def test_counts_coded_once_per_field_and_boost_write_what_segment_writer_writes(
        tmp_path: Path) -> None:
    """Each count of a term in a document is coded once per field and boost (`_CountCodes`):
    documents and fields boosted differently, and empty fields, keep Whoosh's bytes (with
    zlib's deflate; its contents with ISA-L's)."""
    from whoosh.codec.whoosh3 import W3Codec

    from ocm.indexer.buildcodec import BuildCodec

    from .test_buildcodec import ZLIB, _docs, assert_same_index

    docs = _docs(120, seed=8)
    for i, doc in enumerate(docs):
        if i % 4 == 1:
            doc["_boost"] = 2.5
        if i % 5 == 2:
            doc["_body_boost"] = 0.5
        if i % 7 == 3:
            doc["goal"] = ""
    folders = []
    for name, make in (("stock", lambda ix: ix.writer(codec=W3Codec(), compound=False)),
                       ("zlib", lambda ix: BuildWriter(ix, compound=False,
                                                       codec=BuildCodec(deflate=ZLIB))),
                       ("build", lambda ix: BuildWriter(ix, compound=False))):
        (tmp_path / name).mkdir()
        writer = make(index.create_in(str(tmp_path / name), build_schema()))
        for doc in docs:
            writer.add_document(**doc)
        if name == "stock":
            writer.commit()
        else:
            writer.commit_parts([])
        folders.append({path.name.split(".", 1)[1]: path.read_bytes()
                        for path in (tmp_path / name).iterdir()
                        if path.name.startswith("MAIN_") and path.suffix in (".trm", ".pst",
                                                                             ".col")})
    assert {"trm", "pst", "_body_len.col"} <= set(folders[0])
    assert folders[1] == folders[0]
    assert_same_index(tmp_path / "build", tmp_path / "stock", folders[2], folders[0])
