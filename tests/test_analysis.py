from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from whoosh import index
from whoosh.fields import ID, TEXT, Schema
from whoosh.qparser import MultifieldParser, OrGroup, QueryParser

from ocm.indexer.analysis import STOP_WORDS, code_analyzer, tokens


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "embedding_server.py",
            ["embedding_server.py", "embedding_server", "embed", "server", "py"],
        ),
        ("src/api/client.py", ["src/api/client.py", "src", "api", "client.py", "client", "py"]),
        ("agent-crew", ["agent-crew", "agent", "crew"]),
        ("C++", ["c++"]),
        ("C#", ["c#"]),
        ("foo.bar()", ["foo.bar", "foo", "bar"]),
        ("RateLimiterCheck", ["ratelimitercheck", "rate", "limit", "check"]),
        ("rateLimiterCheck", ["ratelimitercheck", "rate", "limit", "check"]),
        ("HTTP2", ["http2"]),
        ("utf-8", ["utf-8", "utf", "8"]),
        ("v1.2.3", ["v1.2.3"]),
        ("#1234", ["1234"]),
        ("optimizing the migrations", ["optim", "migrat"]),
        ("HTTPServer", ["httpserver", "http", "server"]),
        ("__init__.py", ["__init__.py", "__init__", "init", "py"]),
        ("std::vec::Vec", ["std::vec::vec", "std", "vec"]),
        ("x86_64", ["x86_64", "x86", "64"]),
    ],
)
def test_examples_contain_expected_tokens(text: str, expected: list[str]) -> None:
    got = tokens(text)
    missing = [e for e in expected if e not in got]
    assert not missing, f"{text!r} -> {got}, missing {missing}"


def test_whole_token_comes_first_and_parts_are_not_duplicated() -> None:
    got = tokens("src/api/client.py")
    assert got[0] == "src/api/client.py"
    assert len(got) == len(set(got))
    assert tokens("std::vec::Vec").count("vec") == 1


def test_dotnet() -> None:
    got = tokens(".NET")
    assert "net" in got or ".net" in got


def test_plus_plus_and_sharp_are_not_split() -> None:
    assert tokens("C++ and C#") == ["c++", "c#"]
    assert "c" not in tokens("C++")
    assert tokens("i++") == ["i++"]


def test_hash_prefix_and_infix_yield_number() -> None:
    assert tokens("#1234") == ["1234"]
    assert "12" in tokens("issue#12")


def test_compounds_are_not_stemmed_but_parts_are() -> None:
    got = tokens("running_tests.py")
    assert "running_tests.py" in got
    assert "running_tests" in got
    assert "run" in got and "test" in got
    assert "running" not in got


def test_stemming_plain_words() -> None:
    assert tokens("embedding") == ["embed"]
    assert tokens("running runs ran") == ["run", "run", "ran"]
    assert tokens("Configured configuration") == ["configur", "configur"]
    # Query and document forms meet on the same stem.
    assert tokens("limiter") == tokens("limiters")


def test_lowercase() -> None:
    assert tokens("Server SERVER server") == ["server"] * 3


def test_stop_words_removed() -> None:
    assert tokens("the a an of to in is it") == []
    assert tokens("how do I fix the auth bug") == ["fix", "auth", "bug"]


@pytest.mark.parametrize("word", ["go", "io", "os", "db", "ui", "id", "js", "ts", "c", "r", "x"])
def test_short_code_tokens_survive(word: str) -> None:
    assert word not in STOP_WORDS
    assert tokens(word) == [word]
    assert tokens(word.upper()) == [word]


def test_stopword_parts_of_compounds_are_dropped_but_whole_is_kept() -> None:
    got = tokens("the-end of_the_world")
    assert "the-end" in got and "end" in got and "the" not in got
    assert "of_the_world" in got and "world" in got


def test_unicode_words() -> None:
    assert tokens("café") == ["café"]
    assert tokens("日本語") == ["日本語"]
    got = tokens("Über naïve_bayes café-crème 日本語のテキスト")
    assert "über" in got
    assert "naïve_bayes" in got and "naïve" in got and "bay" in got
    assert "café-crème" in got and "crème" in got
    assert any("日本語" in t for t in got)


def test_empty_and_punctuation_only() -> None:
    assert tokens("") == []
    assert tokens("   \n\t ") == []
    assert tokens("--- *** ... /// ::") == []


def test_very_long_tokens_are_dropped_but_parts_kept() -> None:
    blob = "a" * 300
    assert tokens(blob) == []
    got = tokens("1" * 100 + "/" + "2" * 100)
    assert got == ["1" * 100, "2" * 100]


def test_parts_share_position_and_have_own_offsets() -> None:
    text = "see src/api/client.py now"
    toks = [
        (t.text, t.pos, t.startchar, t.endchar)
        for t in code_analyzer()(text, positions=True, chars=True)
    ]
    by_text = {tx: (pos, s, e) for tx, pos, s, e in toks}
    assert by_text["see"][0] == 0
    assert by_text["src/api/client.py"][0] == by_text["client"][0] == 1
    assert by_text["now"][0] == 2
    for tx in ("src/api/client.py", "client.py", "client", "api"):
        _, s, e = by_text[tx]
        assert text[s:e] == tx
    _, s, e = by_text["py"]
    assert text[s:e] == "py"


def test_keeporiginal_tracks_parts() -> None:
    got = [(t.text, t.original) for t in code_analyzer()("embedding_server", keeporiginal=True)]
    assert ("embed", "embedding") in got
    assert ("embedding_server", "embedding_server") in got


def test_analyzer_is_cached() -> None:
    assert code_analyzer() is code_analyzer()


def test_picklable() -> None:
    analyzer = code_analyzer()
    clone = pickle.loads(pickle.dumps(analyzer))
    text = "Optimizing src/inference/embedding_server.py RateLimiterCheck C++ agent-crew café"
    assert [t.text for t in clone(text)] == tokens(text)


def test_one_megabyte_tokenizes_like_its_parts() -> None:
    """A 1 MB text gives exactly its chunks' tokens, in order (no state carried across
    chunks, nothing dropped at scale). Its speed is measured in bench/, not asserted here."""
    chunk = (
        "Optimizing the migrations in src/inference/embedding_server.py broke "
        "RateLimiterCheck; see #1234, utf-8 handling in foo.bar() and the agent-crew "
        "C++ bindings (v1.2.3, HTTP2). We may need a retry_policy_42 for db cursors. "
    )
    copies = 1_000_000 // len(chunk) + 1
    one = tokens(chunk)
    out = tokens(chunk * copies)
    assert len(one) > 20 and out == one * copies


DOCS = {
    "emb": "Fixed the timeout in src/inference/embedding_server.py by raising the pool size",
    "crew": "Notes on the agent-crew orchestration and how tasks are handed over",
    "cpp": "C++ template metaprogramming tricks",
    "csharp": "C# async streams",
    "c": "Plain C code with malloc and free",
    "rl": "The RateLimiter returns 429 when the bucket is empty",
    "prose": "Optimizing the database migrations took most of the afternoon",
}


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory):
    path: Path = tmp_path_factory.mktemp("ix")
    schema = Schema(
        id=ID(stored=True, unique=True),
        title=TEXT(analyzer=code_analyzer(), phrase=False),
        body=TEXT(analyzer=code_analyzer(), phrase=False),
    )
    ix = index.create_in(str(path), schema)
    with ix.writer() as writer:
        for doc_id, body in DOCS.items():
            writer.add_document(id=doc_id, title=doc_id, body=body)
    # Reopen from disk so the schema (and analyzer) goes through pickling.
    ix = index.open_dir(str(path))
    with ix.searcher() as s:
        yield s


def _hits(searcher, querystring: str, multifield: bool = False) -> list[str]:
    schema = searcher.schema
    if multifield:
        parser = MultifieldParser(["title", "body"], schema, group=OrGroup)
    else:
        parser = QueryParser("body", schema, group=OrGroup)
    return [hit["id"] for hit in searcher.search(parser.parse(querystring), limit=None)]


@pytest.mark.parametrize("multifield", [False, True])
@pytest.mark.parametrize(
    ("querystring", "expected"),
    [
        ("embedding_server", ["emb"]),
        ("server", ["emb"]),
        ("embedding server", ["emb"]),
        ("src/inference/embedding_server.py", ["emb"]),
        ("agent crew", ["crew"]),
        ("agent-crew", ["crew"]),
        ("c++", ["cpp"]),
        ("C#", ["csharp"]),
        ("RateLimiter", ["rl"]),
        ("rate limiter", ["rl"]),
        ("optimize migration", ["prose"]),
    ],
)
def test_end_to_end_search(searcher, querystring: str, expected: list[str], multifield: bool):
    assert _hits(searcher, querystring, multifield) == expected


def test_end_to_end_c_does_not_match_cpp_only_docs(searcher) -> None:
    hits = _hits(searcher, "c")
    assert hits == ["c"]
    assert "cpp" not in hits and "csharp" not in hits


def test_end_to_end_compound_ranks_exact_identifier_first(searcher) -> None:
    # "embedding_server" also matches notes that merely mention "server"; the
    # whole-identifier term must make the exact note win.
    hits = _hits(searcher, "embedding_server pool")
    assert hits[0] == "emb"


def test_a_long_text_analysed_again_gives_the_same_terms_and_a_list_of_its_own() -> None:
    from ocm.indexer.analysis import RECENT_MIN_CHARS, CodeAnalyzer

    analyzer = CodeAnalyzer()
    text = "Retrying the embedding_server.py calls with backoff " * 4
    assert len(text) >= RECENT_MIN_CHARS
    first = analyzer.index_terms(text)
    first.append("mutated")
    again = analyzer.index_terms(text)
    assert again == [t.text for t in analyzer(text, mode="index")]
    assert "mutated" not in again and "backoff" in again


def test_indexing_memoises_the_stems_only_and_a_commit_drops_every_memo() -> None:
    """What a build's writer keeps of the words it met: each distinct token's stems, not
    its whole expansion (Term tuples, ~1 KB a token: half a 100k build's writer heap), and
    nothing once cleaned (a build cleans it after each batch)."""
    from ocm.indexer.analysis import CodeAnalyzer, _parts

    analyzer = CodeAnalyzer()
    text = "GraphQLResolver fetches user_id via snake_case paths/to/file.py and runs"
    indexed = analyzer.index_terms(text)
    assert analyzer._expanded == {} and analyzer._indexed
    assert indexed == [t.text for t in analyzer(text, mode="index")]  # the same terms
    assert analyzer.index_terms(text) == indexed
    assert _parts.cache_info().currsize > 0
    analyzer.clean()
    assert (analyzer._indexed, analyzer._expanded, analyzer._recent) == ({}, {}, {})
    assert _parts.cache_info().currsize == 0
    assert analyzer.index_terms(text) == indexed
