"""What a `remember` compares a new record with: each candidate file read once for both
auto-supersede and the near-copy check, and the index asked for the new record's rarest
words only (issue #17: write cost flat in N). Real vaults and Whoosh indexes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import ocm.vault.alike.lookalikes
from ocm.indexer.analysis import tokens
from ocm.indexer.neighbours import rarest
from ocm.project import Project


def test_each_candidate_is_read_once_for_supersede_and_near_copies(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(4):
        project.remember(f"The staging deploy runs the blue pipeline number {i} nightly",
                         "decision", auto_supersede=False, check_copies=False)
    reads: Counter[Path] = Counter()
    real = ocm.vault.alike.lookalikes.read_note_text

    def counted(path: Path) -> str:
        reads[path] += 1
        return real(path)

    monkeypatch.setattr(ocm.vault.alike.lookalikes, "read_note_text", counted)
    # Like all four, superseding none: both checks look at every one of them.
    result = project.remember("The staging deploy runs the green pipeline on weekends",
                              "decision")
    assert result.notice is None
    assert len(reads) == 4 and set(reads.values()) == {1}


def test_rarest_keeps_the_fewest_held_words_and_those_none_holds(project: Project) -> None:
    for i in range(5):
        project.remember(f"Deploys go through the release pipeline, step {i}", "decision",
                         auto_supersede=False, check_copies=False)
    project.remember("Deploys go through kubernetes", "decision", auto_supersede=False,
                     check_copies=False)
    searcher = project.refresh(project.vault).searcher()
    deploy, kubernetes, pipeline, zebra = tokens("deploys kubernetes pipeline zebra")
    terms = [deploy, kubernetes, pipeline, zebra]
    assert rarest(searcher, terms, 1) == [kubernetes, zebra]
    assert rarest(searcher, terms, 2) == [kubernetes, pipeline, zebra]
    assert rarest(searcher, terms, 4) == terms
