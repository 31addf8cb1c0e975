"""What a process that writes many records keeps between two `remember`s (issue #29: a write
at 10k notes costs what it costs at 1k): each record parsed once while its file is unchanged,
each word's token worked out once, the folder of automatic bug_fixes listed again only when
a name in it changed. Real vaults; every kept answer must give way to a change on disk."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

import ocm.vault.alike.autofix as autofix
import ocm.vault.alike.lookalikes as lookalikes
import ocm.vault.alike.words as words
from ocm.project import Project
from ocm.vault import racy

PIPELINE = "The staging deploy runs the blue pipeline number {} nightly"


def past_racy_window() -> None:
    import time

    time.sleep(racy.RACY_NS / 1e9 + 0.02)


def count_parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """The records the look-alike checks parse, by file name (without .md)."""
    parses: Counter[str] = Counter()
    real = lookalikes.MemoryNote

    def counted(doc: object) -> object:
        note = real(doc)  # type: ignore[arg-type]
        parses[note.id] += 1
        return note

    monkeypatch.setattr(lookalikes, "MemoryNote", counted)
    return parses


def test_an_unchanged_record_is_parsed_once_across_remembers(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    olds = [project.remember(PIPELINE.format(i), "decision", auto_supersede=False,
                             check_copies=False).path for i in range(4)]
    past_racy_window()
    parses = count_parses(monkeypatch)
    green = project.remember("The staging deploy runs the green pipeline on weekends",
                             "decision")
    assert green.notice is None
    assert parses == Counter({p.stem: 1 for p in olds})  # all four alike enough to be parsed
    parses.clear()
    past_racy_window()
    project.remember("The staging deploy runs the red pipeline on mondays", "decision")
    assert parses == Counter({green.path.stem: 1})  # only the record new since the last write
    parses.clear()
    past_racy_window()
    # Edited in place: parsed again, and what it says now decides.
    olds[0].write_text(olds[0].read_text().replace("blue pipeline number 0 nightly",
                                                   "purple pipeline on fridays"))
    again = project.remember("The staging deploy runs the purple pipeline on fridays",
                             "decision")
    assert parses[olds[0].stem] == 1 and sum(parses.values()) <= 2  # it, and red
    assert again.notice and olds[0].stem in again.notice, again.notice


def test_past_the_bound_the_parse_longest_kept_gives_way(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lookalikes, "_PARSED", {})
    monkeypatch.setattr(lookalikes, "PARSED_KEPT", 2)
    olds = [project.remember(PIPELINE.format(i), "decision", auto_supersede=False,
                             check_copies=False).path for i in range(4)]
    past_racy_window()
    parses = count_parses(monkeypatch)
    project.remember("The staging deploy runs the green pipeline on weekends", "decision")
    assert len(lookalikes._PARSED) == 2
    parses.clear()
    past_racy_window()
    project.remember("The staging deploy runs the red pipeline on mondays", "decision")
    # Two of the four kept no longer: parsed again, with the same answers as before.
    assert sum(parses[p.stem] for p in olds) >= 2 and len(lookalikes._PARSED) == 2


def test_a_broken_record_is_reported_by_every_remember_that_meets_it(
        project: Project) -> None:
    old = project.remember(PIPELINE.format(0), "decision", auto_supersede=False,
                           check_copies=False).path
    text = old.read_text()
    old.write_text(text.replace("status: active", "status: active\ntags: [unclosed"))
    past_racy_window()
    for colour in ("green", "red"):
        made = project.remember(f"The staging deploy runs the {colour} pipeline nightly",
                                "decision")
        assert made.notice and f"skipped 1 unreadable record file(s) ({old.name}" in (
            made.notice), made.notice


def reference_tokens(text: str) -> list[str]:
    """The tokens as worked out before they were kept: word by word, every time."""
    out = []
    for raw in words._WORD_RE.findall(words._CAMEL_RE.sub(" ", text)):
        word = raw.lower()
        if word in words._STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        out.append(words._stem(word))
    return out


TEXT = ("The RetryPolicy retries 3 times: parsing of HTTPServer replies failed, so the "
        "workers' queues were flushed and a x of 7 entries kept in db_pool_size.")


def test_kept_tokens_are_the_tokens_worked_out_each_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(words, "_TOKENS", {})
    expected = reference_tokens(TEXT)
    assert "retrypolicy" not in expected and "retry" in expected and "7" in expected
    assert words.tokens(TEXT) == expected
    assert words.tokens(TEXT) == expected  # the second time from what was kept
    assert words._TOKENS["HTTPServer"] == reference_tokens("HTTPServer")[0]
    assert words._TOKENS["the"] == ""  # a stopword is kept as left out


def test_past_the_bound_new_words_are_worked_out_and_not_kept(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(words, "_TOKENS", {})
    monkeypatch.setattr(words, "TOKENS_KEPT", 3)
    assert words.tokens(TEXT) == reference_tokens(TEXT)
    assert len(words._TOKENS) == 3
    assert words.tokens("zebras crossing queues") == ["zebra", "cross", "queu"]
    assert len(words._TOKENS) == 3


def test_counts_gives_the_kept_counter_for_a_short_text_only() -> None:
    assert words.counts(TEXT) == Counter(reference_tokens(TEXT))
    assert words.counts(TEXT) is words.counts(TEXT)
    long = TEXT * (words.KEPT_CHARS // len(TEXT) + 1)
    assert words.counts(long) == Counter(reference_tokens(long))
    assert words.counts(long) is not words.counts(long)


def auto_record(folder: Path, n: int, mtime: float) -> Path:
    path = folder / f"{autofix.AUTO_NAME}case-{n}.md"
    path.write_text(f"---\nid: {path.stem}\ntype: bug_fix\n---\n\ntext {n}\n")
    os.utime(path, (mtime, mtime))
    return path


def count_listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    listed: list[str] = []
    real = os.scandir

    def counted(path):  # type: ignore[no-untyped-def]
        listed.append(str(path))
        return real(path)

    monkeypatch.setattr(autofix.os, "scandir", counted)
    return listed


def test_the_automatic_records_are_listed_again_only_after_the_folder_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(autofix, "_LISTED", {})
    folder = tmp_path / "bug_fix"
    folder.mkdir()
    first = auto_record(folder, 1, 1_000_000)
    (folder / "agent-fix-1.md").write_text("an agent's record")
    past_racy_window()
    listed = count_listings(monkeypatch)
    assert autofix._recent(folder, autofix.AUTO_NAME) == [first]
    assert autofix._recent(folder, autofix.AUTO_NAME) == [first]
    assert len(listed) == 1  # the folder unchanged: its names kept
    second = auto_record(folder, 2, 2_000_000)  # a new name: the folder's mtime moves
    assert autofix._recent(folder, autofix.AUTO_NAME) == [second, first]
    assert autofix._recent(folder, autofix.AUTO_NAME) == [second, first]
    assert len(listed) == 3  # changed within the racy window: not kept, listed twice
    past_racy_window()
    first.unlink()
    past_racy_window()
    assert autofix._recent(folder, autofix.AUTO_NAME) == [second]
    assert autofix._recent(folder, autofix.AUTO_NAME) == [second]
    assert len(listed) == 4
