"""A build's token ids a segment at a time (`Embedder._token_ids`): the compiled pipeline's
ids for every text, whatever its spaces, characters or added tokens, from a memo that stays
bounded."""

from __future__ import annotations

import json
from array import array

import pytest

from ocm.indexer import embed

TEXTS = [
    "", " ", "  ", "a", " a", "a ", "a  b", "   leading and trailing   ",
    "the deploy pipeline runs on GitHub Actions", "tabs\tand\nnew\nlines \n indented",
    "embedding_server.py calls backoff() at src/inference/embedding_server.py:42",
    "a literal \u2581 block and \u2581\u2581two of them\u2581", "\u2581",
    "emoji 🚀 and 日本語 and Ünïcödé fall back to bytes", "x" * 500, "z " * 300,
    "an added token <s> here, </s> there and <unk> at last", "<s>", "a<s>b", "<unk><unk>",
    "almost added: <s x> </ s> <unkn> <S>",
]


@pytest.fixture(scope="module")
def model() -> embed.Embedder:
    found, why = embed._load()
    assert found is not None, why
    return found


def _ids(model: embed.Embedder, texts: list[str]) -> list[list[int]]:
    """`_token_ids`' packed ids as lists."""
    return [array("I", packed).tolist() for packed in model._token_ids(texts)]


def _pipeline(model: embed.Embedder, texts: list[str]) -> list[list[int]]:
    tokenizer, _ = model.compiled()
    return [got.ids for got in tokenizer.encode_batch(texts, add_special_tokens=False)]


def test_the_segments_ids_are_the_pipelines_for_every_text(model: embed.Embedder) -> None:
    model._segments.clear()
    first = _ids(model, TEXTS)
    assert first == _pipeline(model, TEXTS)
    assert model._segments  # remembered...
    assert _ids(model, TEXTS) == first  # ...and the same ids when looked up
    assert all(first[1:3]) and first[0] == []  # spaces alone are tokens, "" is none


def test_the_memo_is_bounded_and_emptied_when_full(model: embed.Embedder,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "SEGMENTS_KEPT", 8)
    model._segments.clear()
    words = [f"word{n} " * 3 for n in range(40)]
    for text in words:
        assert _ids(model, [text]) == _pipeline(model, [text])
        assert len(model._segments) <= 8
    many = " ".join(f"distinct{n}" for n in range(20))  # more than the bound in one text
    assert _ids(model, [many]) == _pipeline(model, [many])
    model._segments.clear()


def test_every_added_token_of_the_tokenizer_goes_through_the_pipeline(
        model: embed.Embedder) -> None:
    """Added tokens are matched in the raw text before it is normalized, which the segments
    do not do: `_ADDED` must name each one the tokenizer's JSON has."""
    spec = json.loads(model.tokenizer_path.read_text(encoding="utf-8"))
    added = [token["content"] for token in spec["added_tokens"]]
    assert added and all(embed._ADDED.fullmatch(content) for content in added)


def test_a_build_embeds_the_floats_of_the_whole_pipeline(model: embed.Embedder) -> None:
    """The rows `_compiled` makes from the segments' ids are, bit for bit, the rows pooled
    from the pipeline's ids."""
    _, rows = model.compiled()
    model._segments.clear()
    texts = TEXTS * 2  # several batches of the compiled path, the second from the memo
    assert len(texts) > embed.MODEL_BATCH
    expected = model._pooled(_pipeline(model, texts), rows)
    assert model._compiled(texts).tobytes() == expected.tobytes()
