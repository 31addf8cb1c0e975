"""No secret reaches disk through any write path; the text around it stays intact."""

from __future__ import annotations

from pathlib import Path

import pytest

from ocm.vault.secrets.redact import REDACTION_KINDS
from tests.test_stress_writers import load_stress

stress = load_stress()


@pytest.fixture(autouse=True)
def in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stress, "IN_PROCESS", True)


def test_corpus_covers_at_least_80_kinds() -> None:
    corpus = stress.secret_corpus()
    assert len({kind for kind, *_ in corpus}) >= 80
    assert {kind for kind, *_ in corpus} <= set(REDACTION_KINDS)


def test_no_secret_reaches_disk_and_context_is_kept(tmp_path: Path) -> None:
    report = stress.Report()
    markers = stress.run_secrets(tmp_path, report)
    assert len(markers) >= 6 * 15
    assert report.secrets_leaked == 0, report.problems
    assert report.lost == 0, report.problems
    assert report.problems == []
