"""A deleted, truncated or scrambled `.index/` is rebuilt by the next command, with at most
one notice line and the same answers as a clean rebuild; no command fails for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_stress_writers import load_stress

stress = load_stress()


@pytest.fixture(autouse=True)
def in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stress, "IN_PROCESS", True)


def test_every_kind_of_index_damage_is_repaired(tmp_path: Path) -> None:
    report = stress.Report()
    stress.run_damage(tmp_path, seed=3, report=report)
    assert report.problems == []
    assert report.index_mismatches == 0


def test_index_folder_replaced_by_a_file(project, run_ocm) -> None:
    """Regression: `_create` called rmtree on a file and every read failed."""
    project.remember("Kafka consumer lag grows under load.", "gotcha")
    project.search("kafka")
    index = project.vault.index_dir
    for path in sorted(index.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    index.rmdir()
    index.write_text("not a folder")
    done = run_ocm("search", "kafka", "--json")
    assert '"kafka-consumer-lag' in done.stdout
    assert done.stderr.count("rebuilt") == 1


def test_rebuild_notice_is_printed_once(project, run_ocm) -> None:
    """Regression: the index printed its notice and the CLI printed it again."""
    project.remember("Redis evicts sessions under the LRU policy.", "gotcha")
    project.search("redis")
    for path in project.vault.index_dir.iterdir():
        if path.is_file():
            path.write_bytes(b"")
    done = run_ocm("search", "redis")
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "rebuilt" in lines[0]
