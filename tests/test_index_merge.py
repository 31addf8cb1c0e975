"""Small segments left by incremental commits are merged by indexing their notes again
from the files: the merged index must hold exactly what a rebuild from scratch holds."""

from __future__ import annotations

import shutil
from pathlib import Path

from ocm.indexer import search as engine
from ocm.indexer.index import MAX_SMALL_SEGMENTS, NoteIndex
from ocm.project import Project

PROBES = ["zebracorn", "quokkafish", "widget", "gotcha", "redis", "later", "note", "0", "7"]


def _contents(index: NoteIndex) -> tuple[dict[str, dict], dict[str, set[str]]]:
    searcher = index.searcher()
    stored = {fields["path"]: fields for fields in searcher.all_stored_fields()}
    matches = {}
    for word in PROBES:
        _, terms = engine.text_query(word)
        best = index.scorer().top(engine.term_clauses(terms), 1000)
        matches[word] = {searcher.stored_fields(doc)["path"] for doc, _ in best}
    return stored, matches


def test_merged_small_segments_equal_a_rebuild(tmp_path: Path) -> None:
    project = Project.open(vault=tmp_path / "v", cwd=tmp_path)
    written = [project.remember(f"zebracorn widget gotcha {i} about redis", "gotcha",
                                title=f"widget note {i}") for i in range(3)]
    project.search("zebracorn")
    index = project.index_for(project.vault)
    for i in range(MAX_SMALL_SEGMENTS * 3):
        written.append(project.remember(f"zebracorn later note {i}", "gotcha",
                                        title=f"later {i}"))
        if i == 5:  # an edit and a deletion land in segments that are merged later
            path = written[1].path
            path.write_text(path.read_text().replace("zebracorn", "quokkafish"))
            written[2].path.unlink()
        project.search("zebracorn")
    leaves = index.searcher().ixreader.leaf_readers()
    assert len(leaves) <= MAX_SMALL_SEGMENTS  # merged along the way, not piled up

    copy = tmp_path / "copy"
    shutil.copytree(project.vault.root, copy, ignore=shutil.ignore_patterns(".index"))
    fresh = Project.open(vault=copy, cwd=tmp_path)
    fresh.rebuild_index()
    live_stored, live_matches = _contents(index)
    fresh_stored, fresh_matches = _contents(fresh.index_for(fresh.vault))
    assert live_stored == fresh_stored
    assert live_matches == fresh_matches
    assert "memories/gotcha/" in next(iter(live_matches["quokkafish"]))
    assert len(live_stored) == len(written) - 1
