"""The note model keeps every byte a person wrote; parse→render is the identity."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ocm.vault.errors import NoteFormatError
from ocm.vault.markdown import Document, _item_identity, normalise_heading

SEED_NOTE = """---
id: 2026-02-23_14-32_cursor_tei-migration
tool: cursor
# a comment a person added
project: sprinklr-inference
started_at: 2026-02-23T12:10:00
custom_key: keep me
tags:
  - infra
  - "429"
---

## Goal
Migrate BGE-M3 embedding endpoint from vLLM to TEI for ~40% p50 latency reduction.

---

## Todos

### ✅ Work Completed
- Replaced vLLM serving logic with TEI HTTP client in embedding_server.py
- Created k8s deployment manifest

### 🔲 Work To Be Completed
- Tune TEI batch size (current: 32, target: 64+)

---

## My own notes
Something only a person wrote.

```python
## not a heading inside a fence
```

---

## Architecture Decisions

- **TEI over Infinity:** Native BGE-M3 support; Infinity required patching.
  [TEI supported models](https://huggingface.co/docs/text-embeddings-inference)
"""


def test_seed_note_round_trips_byte_for_byte() -> None:
    assert Document.parse(SEED_NOTE).render() == SEED_NOTE


def test_sections_are_parsed_back_from_headings() -> None:
    doc = Document.parse(SEED_NOTE)
    assert doc.find("goal").text().startswith("Migrate BGE-M3")
    assert doc.find("work completed", "todos").items()[1] == "Created k8s deployment manifest"
    assert doc.find("work to be completed", "todos").items() == [
        "Tune TEI batch size (current: 32, target: 64+)"]
    decisions = doc.find("architecture decisions").items()
    assert decisions == ["**TEI over Infinity:** Native BGE-M3 support; Infinity required "
                         "patching.\n[TEI supported models](https://huggingface.co/docs/"
                         "text-embeddings-inference)"]
    # The fenced '## ' line is content, not a section.
    assert doc.find("not a heading inside a fence") is None
    assert "not a heading" in doc.find("my own notes").text()


def test_frontmatter_edit_keeps_comments_order_and_custom_keys() -> None:
    doc = Document.parse(SEED_NOTE)
    doc.frontmatter.set("status", "closed")
    doc.frontmatter.set("tool", "claude-code")
    out = doc.render()
    assert "# a comment a person added" in out
    assert "custom_key: keep me" in out
    assert out.index("tool: claude-code") < out.index("# a comment") < out.index("status: closed")
    assert Document.parse(out).frontmatter.data["tags"] == ["infra", "429"]


def test_appending_items_keeps_a_persons_extra_bullets_and_sections() -> None:
    doc = Document.parse(SEED_NOTE)
    doc.find("work completed", "todos").append_items(["Wrote latency benchmark"])
    out = doc.render()
    assert out.count("- Created k8s deployment manifest\n- Wrote latency benchmark\n") == 1
    assert "## My own notes\nSomething only a person wrote." in out
    again = Document.parse(out)
    again.find("work completed", "todos").append_items(["Wrote latency benchmark"])
    assert again.render() == out  # already present: not appended twice


def test_renewed_items_move_to_the_end_once() -> None:
    """A log whose last word counts (Failed Commands): a bullet already present moves to
    the end instead of being skipped, and appears once."""
    text = "## Failed Commands\n\n- `t` failed: `E`\n  more of it\n- `t` passed\n\n## Next\nx\n"
    doc = Document.parse(text)
    section = doc.find("failed commands")
    assert section.append_items(["`t` failed: `E`\nmore of it"], renew=True) == [
        "`t` failed: `E`\nmore of it"]
    assert section.items() == ["`t` passed", "`t` failed: `E`\nmore of it"]
    assert "- `t` passed\n- `t` failed: `E`\n  more of it\n\n## Next\nx\n" in doc.render()
    assert section.append_items(["`t` passed"]) == []  # without renew: skipped as before


def test_bullets_without_letters_or_digits_are_skipped() -> None:
    doc = Document.parse(SEED_NOTE)
    assert doc.find("work completed", "todos").append_items(["--", "***", "  "]) == []
    assert doc.render() == SEED_NOTE


def test_replace_items_keeps_non_bullet_text() -> None:
    text = "## Todos\n\n### 🔲 Work To Be Completed\nA note.\n- old one\n- old two\n"
    doc = Document.parse(text)
    doc.find("work to be completed", "todos").replace_items(["new"])
    assert doc.render() == "## Todos\n\n### 🔲 Work To Be Completed\nA note.\n- new\n"


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_crlf_and_bom_survive(newline: str) -> None:
    text = "\ufeff" + SEED_NOTE.replace("\n", newline)
    doc = Document.parse(text)
    assert doc.find("goal") is not None
    doc.frontmatter.set("status", "open")
    out = doc.render()
    assert out.startswith("\ufeff---" + newline)
    assert "\r\n" in out if newline == "\r\n" else "\r" not in out


@pytest.mark.parametrize("text, problem", [
    ("---\nid: [unclosed\n---\nbody\n", "malformed frontmatter"),
    ("---\nid: a\nid: b\n---\n", "duplicated frontmatter key 'id'"),
    ("---\n- just\n- a list\n---\n", "not a mapping"),
    ("---\nid: a\nno end\n", "never ends"),
])
def test_malformed_frontmatter_is_reported(text: str, problem: str) -> None:
    with pytest.raises(NoteFormatError, match=problem):
        Document.parse(text, "x.md")


def test_heading_keys_ignore_emoji_and_case() -> None:
    assert normalise_heading("🔲 Work To Be Completed") == "work to be completed"
    assert normalise_heading("✅  Work   Completed!") == "work completed"


_line = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
             max_size=30),
    st.sampled_from(["## Goal", "### Created", "- item", "  continued", "---", "", "```",
                     "# Title", "| a | b |", "* star", "1. one"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_line, max_size=25), st.lists(st.sampled_from(
    ["id: x", "tool: cursor", "# comment", "tags:", "- a", "n: 3", ""]), max_size=6))
def test_any_body_round_trips(body: list[str], fm: list[str]) -> None:
    text = "---\n" + "\n".join(fm) + "\n---\n" + "\n".join(body)
    try:
        doc = Document.parse(text)
    except NoteFormatError:
        return
    rendered = doc.render()
    assert rendered == text
    assert Document.parse(rendered).render() == rendered


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1,
                        max_size=40).filter(lambda t: any(c.isalnum() for c in t)),
                min_size=1, max_size=6),
       st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=60))
def test_edits_are_stable_under_reparse(items: list[str], value: str) -> None:
    doc = Document.parse(SEED_NOTE)
    doc.find("work completed", "todos").append_items(items)
    doc.frontmatter.set("note", value or None)
    once = doc.render()
    reparsed = Document.parse(once)
    assert reparsed.render() == once
    if value:
        assert reparsed.frontmatter.data["note"] == value
    got = {_item_identity(g) for g in reparsed.find("work completed", "todos").items()}
    for item in items:  # present, or a duplicate (case, spacing, backticks) of one that is
        assert _item_identity(item) in got


def test_headings_and_fences_split_into_blocks() -> None:
    body = ["lead", "# One", "```", "## in a backtick fence", "~~~", "## still in it", "```",
            "## Two", "   ~~~", "# in a tilde fence", "```", "~~~~", "### Three", "    ```",
            "## Four (a four-space indent is no fence)", "#no space", "####### seven",
            "##", "## Five ##", "\t```", "## Six"]
    doc = Document.parse("\n".join(body))
    assert [(b.level, b.heading, b.lines) for b in doc.blocks] == [
        (0, "", ["lead"]),
        (1, "# One", body[2:7]),
        (2, "## Two", body[8:12]),
        (3, "### Three", ["    ```"]),
        (2, "## Four (a four-space indent is no fence)", ["#no space", "####### seven", "##"]),
        (2, "## Five ##", ["\t```", "## Six"]),
    ]
    assert doc.blocks[4].title == "Four (a four-space indent is no fence)"
    assert doc.blocks[5].key == "five"
