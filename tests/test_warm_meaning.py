"""A warm search's meaning side does only what its answer needs, with the answer it had:
meaning-only hits are checked word by word only when the search asks
(ocm/indexer/meaning.py), a note's words are read once per process, the best unshared pair
is found without sorting every pair, coverage is one pass over the candidates, and the
rows and doc numbers a warm process keeps follow a rewritten file and a new searcher."""

from __future__ import annotations

import random
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from ocm.indexer import embed, meaning, ontopic, relevance, search, vectors, wordvectors
from ocm.indexer.postings import PostingScorer
from ocm.project import Project, SearchRequest

NOW = datetime(2026, 11, 27, 12, 0)
CODING = Path(__file__).resolve().parents[1] / "bench" / "data" / "coding"


def _sorted_best(cosines, pieces, other_pieces) -> float:
    """The best unshared pair as `WordMeaning.best` found it before: every pair sorted."""
    width = cosines.shape[1]
    for flat in np.argsort(cosines, axis=None)[::-1].tolist():
        row, col = divmod(flat, width)
        if not pieces[row] & other_pieces(col):
            return float(cosines[row, col])
    return -1.0


def test_the_best_unshared_pair_is_the_one_sorting_every_pair_finds() -> None:
    rng = random.Random(5)
    for _ in range(400):
        rows, cols = rng.randint(1, 5), rng.randint(1, 60)
        # Rounded: many tied cosines, some of them on pairs that share a piece.
        cosines = np.round(np.array([[rng.uniform(-1, 1) for _ in range(cols)]
                                     for _ in range(rows)], dtype=np.float32), 1)
        share = rng.choice([0.0, 0.3, 0.9, 1.0])  # 1.0: every pair shares a piece
        pieces = [frozenset({row}) for row in range(rows)]
        held = [frozenset(r for r in range(rows) if rng.random() < share) | {100 + col}
                for col in range(cols)]
        expected = _sorted_best(cosines.copy(), pieces, held.__getitem__)
        assert ontopic.best_unshared(cosines.copy(), pieces, held.__getitem__) == expected
    # More sharing pairs than it takes out one by one: the rest are sorted.
    ordered = np.linspace(1, 0, 3 * 40, dtype=np.float32).reshape(3, 40)
    held = [frozenset({0, 1, 2}) if col < 30 else frozenset({9}) for col in range(40)]
    pieces = [frozenset({row}) for row in range(3)]
    assert ontopic.UNSHARED_TRIES < 90
    assert ontopic.best_unshared(ordered.copy(), pieces, held.__getitem__) == float(
        ordered[0, 30])
    every = [frozenset({0, 1, 2})] * 40
    assert ontopic.best_unshared(ordered.copy(), pieces, every.__getitem__) == -1.0


def _model():
    model, why = embed._load()
    assert model is not None, why
    return model


def test_a_notes_words_read_once_give_the_floats_of_reading_them_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _model()
    wordvectors._kept.pop(model, None)
    notes = list(dict.fromkeys(p.read_text(encoding="utf-8")
                               for p in sorted(CODING.rglob("*.md"))))[:30]
    words_of = ontopic._note_words
    tokenizer = model.tokenizer(tmp_path)

    def check(text: str) -> None:
        found = wordvectors.text_vectors(model, tmp_path, text, words_of)
        words = words_of(text)
        assert found is not None and words
        rows, pieces = found
        assert rows.tobytes() == model.embed(words, tmp_path).tobytes()
        assert [pieces(at) for at in range(len(words))] == [
            frozenset(tokenizer.encode(word)) for word in words]

    for text in notes + notes:  # the second time from the kept rows
        check(text)
    kept = wordvectors._kept[model]
    assert set(kept.texts) == set(notes)
    assert kept.text_chars == sum(map(len, notes))
    # Past the characters kept, the texts used least recently go.
    bound = sum(map(len, notes[:3]))
    monkeypatch.setattr(wordvectors, "TEXT_CHARS_KEPT", bound)
    kept.clear()
    for text in (*notes[:3], notes[0], notes[3]):
        check(text)
    assert notes[0] in kept.texts and notes[3] in kept.texts and notes[1] not in kept.texts
    assert kept.text_chars == sum(map(len, kept.texts)) <= bound
    # Past the words kept, the words start again, and the texts' rows with them.
    monkeypatch.setattr(wordvectors, "WORDS_KEPT", len(kept.at))
    check(notes[10])
    assert list(kept.texts) == [notes[10]]
    for text in notes[:8]:
        check(text)
    assert wordvectors.text_vectors(model, tmp_path, "a 12 of", words_of) is None
    # A text longer than all the characters kept is read each time, never kept.
    monkeypatch.setattr(wordvectors, "TEXT_CHARS_KEPT", 10)
    check(notes[9])
    assert notes[9] not in kept.texts


def test_word_meaning_best_is_the_highest_unshared_pair_of_embedded_words(
        tmp_path: Path) -> None:
    model = _model()
    wordvectors._kept.pop(model, None)
    tokenizer = model.tokenizer(tmp_path)
    notes = [p.read_text(encoding="utf-8") for p in sorted(CODING.rglob("*.md"))][:25]
    for phrase in ("postgres connection pool", "flaky timeout in the deploy", "the kitten"):
        words = ontopic.content_words(phrase)
        query = model.embed(words, tmp_path)
        pieces = [frozenset(tokenizer.encode(word)) for word in words]
        meant = ontopic.WordMeaning(model, tmp_path, phrase, model.embed([phrase], tmp_path)[0])
        assert meant.query.tobytes() == query.tobytes() and meant.pieces == pieces
        for note in notes:
            note_words = ontopic.content_words(note, ontopic.MAX_NOTE_WORDS)
            if not note_words:
                continue
            held = [frozenset(tokenizer.encode(word)) for word in note_words]
            expected = _sorted_best(query @ model.embed(note_words, tmp_path).T, pieces,
                                    held.__getitem__)
            assert meant.best(note) == expected
            assert meant.best(note) == expected  # the note's words kept from the first
    assert ontopic.WordMeaning(model, tmp_path, "of the", None).best(notes[0]) == 0.0


@pytest.fixture
def pets(project: Project) -> Project:
    for text, title in (("Our cat sleeps on the radiator all winter.", "Pets"),
                        ("The deploy script pushes tags to the registry.", "Deploy"),
                        ("Postgres pool size is 20 connections.", "Pool")):
        project.remember(text, "context", title=title)
    return project


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []
    best = ontopic.WordMeaning.best

    def counted(self: ontopic.WordMeaning, note_text: str) -> float:
        asked.append(note_text)
        return best(self, note_text)

    monkeypatch.setattr(ontopic.WordMeaning, "best", counted)
    return asked


def test_a_meaning_only_hit_a_search_returns_is_checked_word_by_word(
        pets: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _counting(monkeypatch)
    hits = pets.search(SearchRequest(query="the kitten", now=NOW, limit=60, group=False))
    assert [h.title for h in hits] == ["Pets"]
    assert hits[0].matched == "meaning" and hits[0].close
    assert hits[0].close_check is None
    assert any("radiator" in text for text in asked)
    # The check decides: a note whose closest word is not a twin of the phrase's is not
    # close by meaning, and the search answers with nothing.
    monkeypatch.setattr(meaning, "MIN_WORD_COSINE", 1.1)
    assert pets.search(SearchRequest(query="the kitten", now=NOW)) == []


def test_a_meaning_only_hit_the_search_drops_anyway_is_never_read_word_by_word(
        pets: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    pets.remember("The kitten was adopted from the shelter in May.", "context",
                  title="Kitten")
    asked = _counting(monkeypatch)
    left: list[str] = []
    defer = meaning.WordCheck.defer

    def counted(self: meaning.WordCheck, hit, near: float, others: float) -> None:
        left.append(hit.title)
        defer(self, hit, near, others)

    monkeypatch.setattr(meaning.WordCheck, "defer", counted)
    hits = pets.search(SearchRequest(query="the kitten", now=NOW, limit=60, group=False))
    # A note holds the phrase's word: the notes holding none are dropped whatever their
    # meaning, so none of them was read word by word, and every hit returned is settled.
    assert [h.title for h in hits] == ["Kitten"]
    assert "Pets" in left and asked == []
    assert all(h.close_check is None and h.matched is not None for h in hits)


def test_is_close_runs_a_left_check_once(pets: Project) -> None:
    ran: list[str] = []
    hit = pets.search(SearchRequest(query="postgres pool", now=NOW))[0]

    def check(found) -> None:
        ran.append(found.title)
        found.close = True

    hit.close = False
    hit.close_check = check
    assert relevance.is_close(hit) and relevance.is_close(hit)
    assert ran == [hit.title] and hit.close_check is None
    relevance.mark_matched([hit])
    assert hit.matched == "both"


def _coverage_of_each(scorer, words, fields, docs) -> dict[int, float]:
    """`relevance.coverage` by its definition, a doc and a word at a time (the reference)."""
    total = max(scorer.searcher.doc_count(), 1)
    holds = {term: scorer.holders(term, fields) for word in words for term in word}
    idf = {term: relevance._idf(int(held.sum()), total) for term, held in holds.items()}
    distinct = list(dict.fromkeys(words))
    strongest = max((1.0 + max(idf[t] for t in word) for word in distinct), default=0.0)
    out = {}
    for doc in docs:
        found = 0.0
        for word in distinct:
            top = max(idf[t] for t in word)
            if top:
                credit = max([idf[t] * (1.0 if n == 0 else relevance.PART_CREDIT)
                              for n, t in enumerate(dict.fromkeys(word)) if holds[t][doc]],
                             default=0.0)
                found = max(found, (1.0 + top) * credit / top)
        out[doc] = found / strongest if strongest else 0.0
    return out


def test_coverage_in_one_pass_is_the_coverage_a_doc_at_a_time(pets: Project) -> None:
    for text in ("Retry backoff.py uses jitter", "Q1 planning notes", "pool size 20",
                 "backoff jitter in the retry loop", "The Q1 retry of the pool"):
        pets.remember(text, "context", auto_supersede=False)
    pets.search("retry")  # the index brought up to date
    scorer = pets.index_for(pets.vault).scorer()
    fields = (*search.SEARCH_FIELDS, "tags")
    everyone = list(range(scorer.doc_count))
    for query in ("backoff.py jitter", "Q1 pool", "retry", "nothing matches zzzq",
                  "pool 20 retry backoff.py"):
        words = ontopic.query_words(query)
        for docs in (everyone, everyone[::2], [], everyone + everyone[:2]):
            got = relevance.coverage(scorer, words, fields, docs)
            assert got == _coverage_of_each(scorer, words, fields, docs)
            assert all(type(value) is float for value in got.values())


def test_doc_numbers_kept_per_searcher_follow_a_commit(pets: Project) -> None:
    index = pets.index_for(pets.vault)
    scorer = index.scorer()
    rels = [hit.relpath for hit in pets.search(SearchRequest(query="the kitten", now=NOW,
                                                             limit=60, group=False))]
    rels += ["memories/context/none-such.md"]
    first = [meaning.doc_number(scorer, rel) for rel in rels]
    assert first == [scorer.first_live("path", rel) for rel in rels] and first[-1] is None
    assert [meaning.doc_number(scorer, rel) for rel in rels] == first
    # A note deleted: the next search's searcher (a new scorer) no longer finds it.
    pets.forget(pets.search(SearchRequest(query="the kitten", now=NOW))[0].id, delete=True)
    pets.search(SearchRequest(query="deploy", now=NOW))
    fresh = index.scorer()
    assert fresh is not scorer
    assert [meaning.doc_number(fresh, rel) for rel in rels] == [
        fresh.first_live("path", rel) for rel in rels]
    assert meaning.doc_number(fresh, rels[0]) is None
    assert isinstance(fresh, PostingScorer)


def test_rows_looked_up_past_the_bound_come_from_lists_that_follow_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def write(paths: list[str], parts: list[int]) -> None:
        store = vectors.VectorStore(tmp_path)
        store.paths = paths
        store.sigs = [[i, i] for i in range(len(paths))]
        store.parts = parts
        rng = np.random.default_rng(len(paths))
        store.matrix = rng.standard_normal((len(paths), embed.DIM)).astype(np.float32)
        store.part_matrix = rng.standard_normal((sum(parts), embed.DIM)).astype(np.float32)
        store._save()

    monkeypatch.setattr(vectors, "ROWS_LOOKED_BEFORE_LISTS", 2)
    write(["memories/c.md", "memories/a.md", "sessions/b.md"], [0, 2, 3])
    read = vectors.VectorStore(tmp_path)
    read._load()
    asked = ["memories/a.md", "sessions/b.md", "memories/c.md", "memories/gone.md"]
    assert [read.row(rel) for rel in asked] == [1, 2, 0, None]
    assert "paths" not in read._raw  # past the bound: the paths are a list now
    assert [read.row(rel) for rel in asked] == [1, 2, 0, None]
    query = np.full(embed.DIM, 1 / 16, dtype=np.float32)
    rows = [read.row(rel) for rel in asked]

    def alone(row: int | None) -> list[float] | None:  # one note's sections, one product
        start, count = read._sections(row) if row is not None else (0, 0)
        return (read.part_matrix[start:start + count] @ query).tolist() if count else None

    assert read.parts_similarities(rows, query) == [alone(row) for row in rows]
    assert [len(p) if p else p for p in read.parts_similarities(rows, query)] == [
        2, 3, None, None]
    # The file written again under the warm store: its own rows, searched again first.
    write(["memories/gone.md", "sessions/b.md", "memories/a.md", "memories/c.md"],
          [1, 0, 0, 4])
    read._load()
    assert "paths" in read._raw
    assert read.row("memories/gone.md") == 0 and "paths" in read._raw
    assert [read.row(rel) for rel in asked] == [2, 1, 3, 0]
    assert "paths" not in read._raw
    rows = [read.row(rel) for rel in asked]
    parts = read.parts_similarities(rows, query)
    assert [len(p) if p else p for p in parts] == [None, None, 4, 1]
    start, count = read._sections(3)
    assert parts[2] == (read.part_matrix[start:start + count] @ query).tolist()


def test_held_bits_kept_per_scorer_are_the_holders_within_their_bound_and_follow_a_commit(
        pets: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    pets.remember("Retry the pool with backoff jitter.", "context", auto_supersede=False)
    pets.search("retry")  # the index brought up to date
    scorer = pets.index_for(pets.vault).scorer()
    fields = (*search.SEARCH_FIELDS, "tags")
    docs = np.arange(scorer.doc_count, dtype=np.intp)
    bits_per_scorer = (scorer.doc_count + 7) // 8
    # Room for two terms' bits: a third drops the least recently used.
    monkeypatch.setattr(relevance, "HELD_BYTES_KEPT", 2 * bits_per_scorer)
    relevance._held.pop(scorer, None)
    for _ in range(2):  # made, then read from what was kept
        # The index's terms of the words (stemmed: `radiat`), and one no note holds.
        for (term,) in ontopic.query_words("pool retry radiator zzzq"):
            mask = scorer.holders(term, fields)
            count, holding = relevance.held(scorer, term, fields, docs[::-1])
            assert count == int(mask.sum()) and holding.tolist() == mask[::-1].tolist()
            assert len(relevance._held[scorer]) <= 2
    assert list(relevance._held[scorer]) == [("radiat", fields), ("zzzq", fields)]
    assert relevance.held(scorer, "pool", fields, docs[:0])[1].tolist() == []
    # A new note holding a kept term: the next search's scorer counts it afresh.
    before = relevance.held(scorer, "radiat", fields, docs)[0]
    assert before == 1
    pets.remember("The radiator in the server room leaks.", "context", auto_supersede=False)
    pets.search(SearchRequest(query="radiator", now=NOW))
    fresh = pets.index_for(pets.vault).scorer()
    assert fresh is not scorer
    count, holding = relevance.held(fresh, "radiat", fields,
                                    np.arange(fresh.doc_count, dtype=np.intp))
    assert count == before + 1 == int(fresh.holders("radiat", fields).sum())
    assert holding.tolist() == fresh.holders("radiat", fields).tolist()
