"""Meaning as well as words: the real WordLlama model from its wheel, fused with BM25F."""

from __future__ import annotations

import socket
from datetime import datetime, timedelta

import pytest

from ocm.indexer import embed
from ocm.project import Project, SearchRequest

NOW = datetime(2026, 11, 20, 18, 0)


@pytest.fixture
def semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embed.SEMANTIC_ENV, "1")


@pytest.fixture
def pets(project: Project) -> Project:
    project.remember("Our cat sleeps on the radiator all winter", "context",
                     created=NOW - timedelta(days=3))
    project.remember("The deploy pipeline runs on GitHub Actions", "context",
                     created=NOW - timedelta(days=2))
    project.remember("Postgres connection pool size is 20", "context",
                     created=NOW - timedelta(days=1))
    return project


@pytest.fixture(scope="module")
def wordllama_itself():  # -> wordllama.inference.WordLlamaInference
    """WordLlama itself, loaded from its wheel with downloads disabled: the reference our
    embeddings (which never import it) must equal."""
    import wordllama

    model, why = embed._load()
    assert model is not None, why
    return wordllama.WordLlama.load(embed.MODEL, cache_dir=model.folder, dim=embed.DIM,
                                    disable_download=True)


def titles(project: Project, query: str) -> list[str]:
    return [h.title for h in project.search(SearchRequest(query=query, now=NOW))]


def vectors(project: Project) -> dict[str, list[int]]:
    from ocm.indexer.vectors import VectorStore

    project.index_for(project.vault).close()  # writes what this process changed
    store = VectorStore(project.vault.index_dir)
    store._load()
    return dict(zip(store.paths, store.sigs, strict=True))


def test_a_paraphrase_is_found_only_with_meaning(pets: Project, semantic: None,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    assert titles(pets, "the kitten") == ["Our cat sleeps on the radiator all winter"]
    assert titles(pets, "where does the kitty nap") == [
        "Our cat sleeps on the radiator all winter"]
    assert titles(pets, "quantum chromodynamics") == []  # far in meaning too: nothing
    monkeypatch.setenv(embed.SEMANTIC_ENV, "0")
    assert titles(pets, "the kitten") == []  # keyword-only: no shared word, no hit
    assert titles(pets, "connection pool") == ["Postgres connection pool size is 20"]


def test_keyword_only_mode_writes_no_vectors(pets: Project,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embed.SEMANTIC_ENV, "0")
    assert titles(pets, "radiator") == ["Our cat sleeps on the radiator all winter"]
    assert not (pets.vault.index_dir / "vectors.npz").exists()
    assert pets.semantic_status() == {"enabled": False, "available": False, "model": None,
                                      "detail": "turned off (OCM_SEMANTIC=0)",
                                      "switch": "OCM_SEMANTIC=0"}
    assert pets.status()["search"] == "keywords only (turned off (OCM_SEMANTIC=0))"


def test_vectors_follow_the_notes(pets: Project, semantic: None) -> None:
    titles(pets, "radiator")
    before = vectors(pets)
    assert len(before) == 3
    cat = next(rel for rel in before if "cat" in rel)
    path = pets.vault.root / cat
    path.write_text(path.read_text().replace("Our cat sleeps", "Our dog naps"))
    assert titles(pets, "the puppy")[0].startswith("Our dog naps")
    after = vectors(pets)
    assert after[cat] != before[cat] and len(after) == 3  # re-embedded under its new signature
    path.unlink()
    titles(pets, "radiator")
    assert cat not in vectors(pets) and len(vectors(pets)) == 2
    # A lost or damaged vector file is rebuilt from the notes.
    stored = pets.vault.index_dir / "vectors.npz"
    whole = stored.read_bytes()
    for damaged in (b"garbage", whole[: len(whole) // 2]):  # not a zip; a zip cut mid-write
        stored.write_bytes(damaged)
        assert titles(pets, "database connections")[0] == "Postgres connection pool size is 20"
        assert len(vectors(pets)) == 2 and stored.read_bytes() != damaged
    # Rows and their keys live in one file, replaced in one step: no pair to mismatch.
    assert sorted(p.name for p in pets.vault.index_dir.glob("vectors*")) == ["vectors.npz"]


def test_a_model_that_fails_to_load_leaves_search_keyword_only(
        pets: Project, semantic: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "DIM", 4096)  # no such weights in the wheel: the real loader fails
    monkeypatch.setattr(embed, "_announced", False)
    embed._load.cache_clear()
    try:
        assert titles(pets, "connection pool") == ["Postgres connection pool size is 20"]
        assert titles(pets, "the kitten") == []
        notices = [n for n in pets.notices if "semantic" in n]
        assert len(notices) == 1 and "keywords only" in notices[0]  # said once
        status = pets.semantic_status()
        assert status["enabled"] and not status["available"] and status["detail"]
    finally:
        embed._load.cache_clear()


def test_the_model_loads_with_no_network(semantic: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access while loading the model")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    embed._load.cache_clear()
    try:
        model, why = embed.embedder()
        assert model is not None, why
        a, b = model.embed(["constants.ts is 800 lines and should be split",
                            "constants.ts was refactored into domain modules"])
        assert 0.2 < float(a @ b) < 0.9
    finally:
        embed._load.cache_clear()


def _texts() -> list[str]:
    """200 texts: notes and queries of the coding set, and awkward strings."""
    import json
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "bench" / "data" / "coding"
    bodies = [p.read_text(encoding="utf-8")[:1500] for p in sorted(data.rglob("*.md"))][:116]
    queries = [json.loads(line)["text"] for line in
               (data / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    awkward = ["", " ", "a  b   c", "  leading and trailing  ", "tab\tand\nnewline",
               "héllo wörld 日本語 🎉", "<s>special</s> <unk>", "x<s>", "▁already▁marked",
               "def f(x):\n    return x ** 2  # squared", "src/api/client.py:42 KeyError"]
    return bodies + queries + awkward


def test_the_lean_path_gives_wordllamas_vectors(tmp_path, wordllama_itself) -> None:
    import marshal

    import numpy as np
    from tokenizers import Tokenizer as Compiled

    from ocm.indexer import bpe
    from ocm.indexer.bpe import Tokenizer

    model, why = embed._load()
    assert model is not None, why
    texts = _texts()
    assert len(texts) == 200 and sum(map(len, texts)) > 20_000
    compiled = Compiled.from_file(str(model.tokenizer_path))
    (tmp_path / "tokenizer.marshal").write_bytes(b"version 1's table, left as it is")
    lean = Tokenizer.cached(model.tokenizer_path, tmp_path)
    assert (tmp_path / bpe.TABLE).is_file()
    assert (tmp_path / "tokenizer.marshal").read_bytes() == b"version 1's table, left as it is"
    for text in texts:  # token for token
        assert lean.encode(text) == compiled.encode(text, add_special_tokens=False).ids, text
    ours = np.concatenate([model.embed(texts[i:i + 10], tmp_path) for i in range(0, 200, 10)])
    theirs = wordllama_itself.embed(texts, norm=False)
    theirs /= np.maximum(np.linalg.norm(theirs, axis=1, keepdims=True), 1e-12)
    assert np.abs(ours - theirs).max() < 1e-6
    # A batch past LEAN_CHARS goes to the compiled tokenizer: the same vectors.
    assert np.abs(model.embed(texts, tmp_path) - theirs).max() < 1e-6
    # A table read again gives the same ids (its merges looked up in the stored arrays).
    again = Tokenizer.cached(model.tokenizer_path, tmp_path)
    assert not again._known
    for text in texts[:20]:
        assert again.encode(text) == compiled.encode(text, add_special_tokens=False).ids, text
    # A damaged table is made again from the wheel's JSON: garbage, or merge arrays cut short.
    key, chars, pairs, merged, *rest = marshal.loads((tmp_path / bpe.TABLE).read_bytes())
    for damaged in (b"\x00garbage", marshal.dumps([key, chars, pairs, merged[:-8], *rest]),
                    marshal.dumps([key, chars, pairs[:-3], merged, *rest])):
        (tmp_path / bpe.TABLE).write_bytes(damaged)
        assert Tokenizer.cached(model.tokenizer_path, tmp_path).encode(texts[0]) == (
            compiled.encode(texts[0], add_special_tokens=False).ids)
        assert (tmp_path / bpe.TABLE).read_bytes() != damaged


def test_a_word_too_long_to_merge_in_python_goes_to_the_compiled_tokenizer(
        tmp_path, wordllama_itself) -> None:
    import numpy as np

    model, why = embed._load()
    assert model is not None, why
    blob = "x" * 5000 + " and some words"
    theirs = wordllama_itself.embed([blob], norm=False)[0]
    assert np.abs(model.embed([blob], tmp_path)[0] - theirs / np.linalg.norm(theirs)).max() < 1e-6


def test_bulk_embedding_without_the_compiled_tokenizer_gives_the_same_vectors(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    model, why = embed._load()
    assert model is not None, why
    texts = _texts()
    blob = "y" * 2000 + " and words"
    expected = model.embed([*texts, blob], tmp_path)

    def broken() -> None:
        raise ImportError("tokenizers is broken")

    monkeypatch.setattr(model, "compiled", broken)
    assert np.abs(model.embed([*texts, blob], tmp_path) - expected).max() < 1e-6


def test_a_search_embeds_its_query_without_wordllama(pets: Project, run_ocm) -> None:
    import subprocess
    import sys

    pets.search(SearchRequest(query="kitten", now=NOW))  # vectors built (wordllama or not)
    assert (pets.vault.index_dir / "vectors.npz").is_file()
    script = ("import sys; from ocm.project import Project, SearchRequest; "
              f"p = Project.open(cwd={str(pets.root)!r}); "
              "hits = p.search(SearchRequest(query='where does the kitty nap')); "
              "print(hits[0].title); "
              "print(sorted(m for m in ('wordllama', 'tokenizers', 'safetensors') "
              "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env={**__import__("os").environ, embed.SEMANTIC_ENV: "1"})
    assert out.stdout.splitlines() == ["Our cat sleeps on the radiator all winter", "[]"]


def test_semantic_is_on_by_default_and_the_config_key_turns_it_off(
        pets: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    monkeypatch.delenv(embed.SEMANTIC_ENV, raising=False)
    assert titles(pets, "the kitten") == ["Our cat sleeps on the radiator all winter"]
    assert pets.status()["search"].startswith("keywords + meaning (wordllama l2_supercat; "
                                              "default)")
    (pets.vault.root / "config.json").write_text(json.dumps({"semantic": False}))
    assert titles(pets, "the kitten") == []
    assert pets.status()["search"] == (
        'keywords only (turned off ("semantic": false in config.json))')
    monkeypatch.setenv(embed.SEMANTIC_ENV, "1")  # the variable wins over the file
    assert titles(pets, "the kitten") == ["Our cat sleeps on the radiator all winter"]
    monkeypatch.setenv(embed.SEMANTIC_ENV, "0")
    (pets.vault.root / "config.json").write_text(json.dumps({"semantic": True}))
    assert titles(pets, "the kitten") == []
    monkeypatch.delenv(embed.SEMANTIC_ENV)
    (pets.vault.root / "config.json").write_text("{not json")  # unreadable: the default
    assert titles(pets, "the kitten") == ["Our cat sleeps on the radiator all winter"]


def test_doctor_reports_semantic_search(pets: Project, run_ocm,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    def check(value: str) -> dict:
        monkeypatch.setenv(embed.SEMANTIC_ENV, value)
        out = run_ocm("doctor", "--json", check=False)
        return next(c for c in json.loads(out.stdout) if c["what"] == "semantic search")

    on = check("1")
    assert on["status"] == "ok" and "wordllama" in on["detail"]
    assert on["detail"].startswith("on: ")
    off = check("0")
    assert off["status"] == "info" and "OCM_SEMANTIC=0" in off["detail"]
    assert off["detail"].startswith("off, keywords only")


def test_meaning_does_not_stand_in_when_the_querys_word_is_found(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    from ocm.indexer import meaning, relevance
    from ocm.indexer import search as engine

    tokens = ["tkqwertyuiopas", "tkzxcvbnmlkjhg", "tkpoiuytrewqas", "tkmnbvcxzasdfg"]
    for token in tokens:
        project.remember(f"Fact {token} about the build.", "context", auto_supersede=False)
    for text in ("Postgres connection pool size is 20", "Our cat sleeps on the radiator",
                 "The deploy pipeline runs on GitHub Actions", "Use ruff before committing"):
        project.remember(text, "context")
    assert [h.title for h in project.search(SearchRequest(query=tokens[1], now=NOW))] == [
        f"Fact {tokens[1]} about the build."]
    # The rule, not the relative threshold (which meaning's small weight may keep them
    # under), holds back the other facts, close to the token only by its pieces.
    monkeypatch.setattr(engine, "RELATIVE_THRESHOLD", 0.0)
    assert [h.title for h in project.search(SearchRequest(query=tokens[1], now=NOW))] == [
        f"Fact {tokens[1]} about the build."]
    # Without it (and without the word-twin rule, which these tokens already fail: they
    # share pieces, not meaning) the other facts come back by meaning.
    monkeypatch.setattr(meaning, "MIN_WORD_COSINE", -1.0)
    monkeypatch.setattr(relevance, "FULL_COVERAGE", 2.0)
    assert len(project.search(SearchRequest(query=tokens[1], now=NOW))) > 1


def test_fusion_reads_every_notes_cosine_and_the_closest_notes_in_order(
        project: Project, semantic: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fused candidates and similarities are those of the per-note cosines: each hit's
    cosine above the mean of the other notes' (summed as Python sums them), and the notes
    closest in meaning added best first, equal cosines (copies of one note) in store order."""
    import heapq

    from ocm.indexer import search as engine
    from ocm.indexer.embed import embedder
    from ocm.indexer.hits import Filters

    for i in range(6):
        project.remember("Our cat sleeps on the radiator all winter", "context",
                         title="cat", created=NOW - timedelta(days=i),
                         auto_supersede=False)
    for i, text in enumerate(["The deploy pipeline runs on GitHub Actions",
                              "Postgres connection pool size is 20",
                              "Use ruff before committing", "Redis keys expire after a day",
                              "The kitten chased a mouse in the garden"]):
        project.remember(text, "context", created=NOW - timedelta(days=10 + i))
    monkeypatch.setattr(engine, "VECTOR_CANDIDATES", 3)  # the cut splits the six copies
    index = project.refresh(project.vault)
    store = index.vectors()
    model, _ = embedder(index.vault.root)
    compared = 0
    for query in ("where does the kitty nap", "garden mouse", "database connections"):
        sims = dict(zip(store.paths,
                        store.cosines(model.embed([query], store.folder)[0]).tolist(),
                        strict=True))
        total = sum(sims.values())
        words = engine.candidates(index, query, (), Filters(), meaning=False)
        fused = engine.candidates(index, query, (), Filters())
        assert [h.relpath for h in fused[: len(words)]] == [h.relpath for h in words]
        known = {h.relpath for h in words}
        closest = heapq.nlargest(3, sims, key=sims.__getitem__)
        assert [h.relpath for h in fused[len(words):]] == [r for r in closest if r not in known]
        for hit in fused:
            cosine = sims[hit.relpath]
            assert hit.similarity == cosine - (total - cosine) / (len(sims) - 1)
            compared += 1
    assert compared >= 9


def test_meaning_weighs_more_in_a_pasted_paragraph_than_in_a_phrase(
        project: Project, semantic: None) -> None:
    """No note holds a word of either query: the closest note's fused score is meaning's
    whole weight, SEMANTIC_WEIGHT for a search phrase, PARAGRAPH_SEMANTIC_WEIGHT for a
    paragraph of over 20 words."""
    from ocm.indexer import search as engine
    from ocm.indexer.hits import Filters

    for text in ("Our cat sleeps on the radiator all winter", "Use ruff before committing",
                 "Postgres connection pool size is 20", "Redis keys expire after a day"):
        project.remember(text, "context")
    index = project.refresh(project.vault)
    phrase = "where does the kitty nap"
    paragraph = ("where does the little kitty like to nap and doze off during those long "
                 "quiet evenings when everybody else has already gone up to bed tonight")
    assert len(phrase.split()) <= 20 < len(paragraph.split())
    for query, weight in ((phrase, engine.SEMANTIC_WEIGHT),
                          (paragraph, engine.PARAGRAPH_SEMANTIC_WEIGHT)):
        assert engine.candidates(index, query, (), Filters(), meaning=False) == []
        fused = engine.candidates(index, query, (), Filters())
        assert fused and fused[0].title == "Our cat sleeps on the radiator all winter"
        assert max(h.score for h in fused) == pytest.approx(engine.FUSED_SCALE * weight)
    assert engine.PARAGRAPH_SEMANTIC_WEIGHT != engine.SEMANTIC_WEIGHT


def test_cosines_are_the_rows_products_whatever_the_blocks(tmp_path) -> None:
    """Each row's cosine, in row order, as a single-threaded product gives it: the same
    floats multiplied in blocks of another size."""
    import numpy as np

    from ocm.indexer.vectors import PRODUCT_ROWS, VectorStore

    rng = np.random.default_rng(3)
    store = VectorStore(tmp_path)
    rows = rng.standard_normal((2 * PRODUCT_ROWS + 77, embed.DIM)).astype(np.float32)
    store.matrix = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    store.paths = [f"n{i}.md" for i in range(len(rows))]
    for _ in range(5):
        query = rng.standard_normal(embed.DIM).astype(np.float32)
        query /= np.linalg.norm(query)
        cosines = store.cosines(query)
        assert cosines.dtype == np.float32 and cosines.shape == (len(rows),)
        assert np.array_equal(cosines, np.concatenate(
            [store.matrix[start:start + 64] @ query for start in range(0, len(rows), 64)]))


def test_a_build_embeds_with_the_compiled_tokenizer_the_floats_of_the_lean_path(
        tmp_path, wordllama_itself, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build's bulk path (`_compiled`: the wheel's tokenizer compiled, unpadded, over the
    rows as float32) gives bit for bit the rows of the lean path, and wordllama's own
    `embed`'s."""
    import numpy as np

    monkeypatch.setattr(embed, "MODEL_BATCH", 16)
    model, why = embed._load()
    assert model is not None, why
    texts = ["", "a", *_texts(), "x" * 30, "", "z " * 700]
    assert len(texts) > 3 * embed.MODEL_BATCH  # several calls of the tokenizer
    bulk = model._compiled(texts)
    assert bulk.tobytes() == model._lean(texts, tmp_path, max_segment=None).tobytes()
    assert not bulk[0].any() and bulk[1].any()
    theirs = wordllama_itself.embed(texts[1:9], norm=False)
    assert np.abs(bulk[1:9] - theirs).max() < 1e-6


def test_a_builds_embedding_never_imports_wordllama() -> None:
    """A build embeds through `tokenizers` alone: wordllama's import (~0.8 s of CPU, before
    a build's first fork) is not paid."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from ocm.indexer import embed\n"
            "model, why = embed._load()\n"
            "assert model is not None, why\n"
            "rows = model.embed(['the deploy pipeline runs on GitHub Actions ' * 600])\n"
            "assert rows.shape == (1, embed.DIM) and rows.any()\n"
            "assert model._bulk is not None  # (the bulk path was taken)\n"
            "print(sorted(m for m in ('wordllama', 'tokenizers') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "['tokenizers']"


def test_texts_embedded_together_are_the_floats_of_each_alone(tmp_path) -> None:
    """`_lean` gathers all texts' token rows at once and adds short texts a length at a
    time: every row must be, bit for bit, the mean of its tokens' rows added in order (the
    way one text alone was embedded), whatever it is batched with."""
    import numpy as np

    model, why = embed._load()
    assert model is not None, why
    words = " ".join(_texts()).split()
    texts = ["", "a", "   ", *words[:400], *_texts()[:20], "", "x" * 30]
    tokenizer = model.tokenizer(tmp_path)
    top = model.matrix.shape[0] - 1
    lean = model._lean(texts, tmp_path)
    counts = set()
    for row, text in enumerate(texts):
        ids = np.minimum(np.asarray(tokenizer.encode(text), dtype=np.int64), top)
        counts.add(len(ids))
        alone = (model.matrix[ids].astype(np.float32).sum(axis=0) / len(ids) if len(ids)
                 else np.zeros(embed.DIM, dtype=np.float32))
        assert lean[row].tobytes() == alone.tobytes(), text
    # short texts of several lengths and long ones were both taken
    assert {0, 1, 2, 3}.issubset(counts) and max(counts) > embed.SHORT_TOKENS


def test_a_short_text_remembered_by_the_tokenizer_is_not_changed_by_its_caller(tmp_path) -> None:
    from ocm.indexer.bpe import TooLong

    model, why = embed._load()
    assert model is not None, why
    tokenizer = model.tokenizer(tmp_path)
    first = tokenizer.encode("radiator")
    first.append(-1)  # the caller's list, not the one remembered
    assert tokenizer.encode("radiator") == first[:-1]
    # A text whose word is longer than the limit is refused, not remembered as short.
    with pytest.raises(TooLong):
        tokenizer.encode("zqxjkvbwplm", 5)
    assert "zqxjkvbwplm" not in tokenizer._short
