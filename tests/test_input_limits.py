"""Smaller input limits of issue #31, through the CLI in fresh processes: a hand-edited
note's megabyte title is indexed and shown only in part; `checkpoint --input -` with JSON
nested 100,000 deep is a one-line error."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ocm.indexer.documents import SHOWN_TITLE_CHARS
from ocm.project import Project
from tests.conftest import snapshot

Run = Callable[..., object]


@pytest.mark.cli_in_process
def test_a_megabyte_title_is_shown_and_indexed_only_in_part(project: Project,
                                                            run_ocm: Run) -> None:
    made = project.remember("The cache is warmed at deploy time.", "gotcha",
                            title="Cache warming")
    path = Path(made.path)
    text = path.read_text()
    huge = "warming " + "x" * 1_900_000
    path.write_text(text.replace("title: Cache warming", f"title: {huge}"))
    done = run_ocm("search", "cache warmed deploy", "--json")
    hits = json.loads(done.stdout)  # type: ignore[attr-defined]
    assert [h["id"] for h in hits] == [made.id]
    assert len(hits[0]["title"]) <= SHOWN_TITLE_CHARS and hits[0]["title"].startswith("warming")
    assert len(done.stdout) < 20_000  # type: ignore[attr-defined]


@pytest.mark.cli_in_process
def test_checkpoint_input_nested_too_deeply_is_one_line(project: Project, run_ocm: Run) -> None:
    before = snapshot(project.vault.root)
    deep = '{"goal": ' + "[" * 100_000 + "]" * 100_000 + "}"
    done = run_ocm("checkpoint", "--input", "-", input=deep, check=False)
    assert done.returncode == 1  # type: ignore[attr-defined]
    assert done.stderr.strip() == "error: --input is JSON nested too deeply"  # type: ignore[attr-defined]
    assert snapshot(project.vault.root) == before
