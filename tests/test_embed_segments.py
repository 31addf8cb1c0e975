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
    "def f(x):\n    return  x ** 2  # two spaces, then\n\tindented", "trailing  \n  ",
    "no\u00a0break\u3000wide space", "a \u2581 b", "\u2581 lead", "  \u2581",
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


def test_a_build_embeds_the_floats_of_the_whole_pipeline(
        model: embed.Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows `_compiled` makes from the segments' ids are, bit for bit, the rows pooled
    from the pipeline's ids."""
    monkeypatch.setattr(embed, "MODEL_BATCH", 16)
    _, rows = model.compiled()
    model._segments.clear()
    texts = TEXTS * 2  # several batches of the compiled path, the second from the memo
    assert len(texts) > embed.MODEL_BATCH
    expected = model._pooled(_pipeline(model, texts), rows)
    assert model._compiled(texts).tobytes() == expected.tobytes()


def _varied() -> list[str]:
    """Texts of every kind a build embeds, in no order: whole notes of the coding set,
    code, prose in other scripts, emoji, a word too long to merge, runs of spaces, texts of
    0, 1, a few and exactly SHORT_TOKENS-ish tokens."""
    import random
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "bench" / "data" / "coding"
    notes = [p.read_text(encoding="utf-8") for p in sorted(data.rglob("*.md"))][:60]
    code = ("def pooled(ids, counts):\n    out = np.zeros((len(counts), DIM))\n"
            "    for row in range(len(counts)):  # one  at  a  time\n"
            "        out[row] = rows[ids[row]].sum(axis=0)\n    return out\n")
    others = ["Привет, мир! Это заметка о развёртывании.", "部署管道在 GitHub Actions 上运行。",
              "مرحبا بالعالم", "emoji 🚀🔥✅ and ZWJ 👩‍💻 sequences", "Ünïcödé àccénts ñ ß ø"]
    words = " ".join(notes).split()
    sizes = [1, 2, 3, 5, 8, 11, 13, 15, 16, 17, 18, 20] * 2
    short = [" ".join(words[20 * at:20 * at + size]) for at, size in enumerate(sizes)]
    texts = [*notes, code * 3, *others, *short, *TEXTS, "y" * 5000, "  ".join(words[:300]),
             "\n".join(notes[:3]), " " * 40, "", "a"]
    random.Random(29).shuffle(texts)
    return texts


def test_a_builds_vectors_are_bit_for_bit_the_pipelines_rows_summed_in_order(
        model: embed.Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """`embed` of a build (the compiled path: pieces from the memo, each text's rows
    gathered and summed alone) gives, bit for bit, the vectors made before those changes:
    the whole pipeline's ids of each text, its rows summed in order in float32 and divided
    by their count, the row then made unit length. Whatever the batch (one call of many
    texts, several calls of a few, a memo emptied on the way)."""
    import numpy as np

    _, rows = model.compiled()
    texts = _varied()
    assert sum(map(len, texts)) > embed.LEAN_CHARS
    last = rows.shape[0] - 1
    expected = np.zeros((len(texts), embed.DIM), dtype=np.float32)
    for row, ids in enumerate(_pipeline(model, texts)):
        if ids:
            expected[row] = rows[np.minimum(np.asarray(ids), last)].sum(axis=0) / len(ids)
    norms = np.linalg.norm(expected, axis=1, keepdims=True)
    expected = (expected / np.maximum(norms, 1e-12)).astype(np.float32)
    counts = {len(ids) for ids in _pipeline(model, texts)}
    assert {0, 1, embed.SHORT_TOKENS, embed.SHORT_TOKENS + 1}.issubset(counts)
    assert max(counts) > 1000

    model._segments.clear()
    assert model.embed(texts).tobytes() == expected.tobytes()
    assert model.embed(texts).tobytes() == expected.tobytes()  # from the memo
    monkeypatch.setattr(embed, "MODEL_BATCH", 7)
    monkeypatch.setattr(embed, "SEGMENTS_KEPT", 500)  # emptied on the way
    model._segments.clear()
    assert model.embed(texts).tobytes() == expected.tobytes()
    assert len(model._segments) <= 2_000
    model._segments.clear()
