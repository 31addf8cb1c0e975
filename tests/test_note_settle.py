"""A session note truncated in place by another program while a checkpoint runs.

Editors that save in place truncate the file, then write it again. The editor here is a
real separate process doing exactly that to the real note file; the checkpoint must wait
for it (and keep both its edit and the checkpoint), or refuse with an error that names the
cause, and never act on the empty note.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ocm.project import Project
from ocm.vault.errors import Conflict
from ocm.vault.folder import read_document
from ocm.vault.freshness.settle import SETTLE_SECONDS
from ocm.vault.sessions import CheckpointInput, SessionNote

# Truncates the note, then writes it back in two parts (the first ends inside the
# frontmatter) with pauses, as an editor saving in place over a slow disk would.
EDITOR = r"""
import sys, time
path, extra, pause = sys.argv[1], sys.argv[2], float(sys.argv[3])
with open(path, "r+b") as handle:
    whole = handle.read() + extra.encode()
    handle.seek(0)
    handle.truncate(0)
    handle.flush()
    print("truncated", flush=True)
    time.sleep(pause)
    handle.write(whole[:12])
    handle.flush()
    time.sleep(pause)
    handle.write(whole[12:])
    handle.flush()
"""


def _session(project: Project) -> tuple[str, Path]:
    result = project.checkpoint(CheckpointInput(goal="Ship the parser."), tool="cursor")
    return result.id, result.path


def _truncate_in_place(path: Path, extra: str, pause: float) -> subprocess.Popen[str]:
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(path), extra, str(pause)],
                              stdout=subprocess.PIPE, text=True)
    assert editor.stdout is not None
    assert editor.stdout.readline().strip() == "truncated"
    return editor


def test_a_checkpoint_waits_for_an_editor_rewriting_the_note(project: Project) -> None:
    sid, path = _session(project)
    editor = _truncate_in_place(path, "\nA line typed in the editor.\n", pause=0.3)
    try:
        assert path.stat().st_size == 0  # the checkpoint starts on an empty note
        result = project.checkpoint(CheckpointInput(work_completed=["Parser merged"]),
                                    session_id=sid)
    finally:
        assert editor.wait(timeout=30) == 0
    assert result.id == sid and result.changed
    text = path.read_text()
    assert "A line typed in the editor." in text and "Parser merged" in text
    note = SessionNote(read_document(path))
    assert note.id == sid and note.items("work completed") == ["Parser merged"]
    assert "Ship the parser." in text


def test_a_note_left_empty_is_refused_with_the_reason(
        project: Project, run_ocm: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    sid, path = _session(project)
    editor = _truncate_in_place(path, "", pause=SETTLE_SECONDS * 3)
    try:
        before = sorted(p.name for p in path.parent.iterdir())
        done = run_ocm("checkpoint", "--session", sid, "--done", "Parser merged", check=False)
        assert path.stat().st_size == 0  # nothing was written while the editor held it
    finally:
        editor.kill()
        editor.wait()
    assert done.returncode == 1
    assert "note is being written by another program" in done.stderr
    assert "it is empty" in done.stderr
    assert "session id" not in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in path.parent.iterdir()) == before  # no second session


def test_a_note_cut_inside_its_frontmatter_is_refused_and_kept(project: Project) -> None:
    sid, path = _session(project)
    half = path.read_bytes()[:20]
    path.write_bytes(half)
    with pytest.raises(Conflict, match="note is being written by another program"):
        project.checkpoint(CheckpointInput(work_completed=["Parser merged"]), session_id=sid)
    assert path.read_bytes() == half


def test_a_note_broken_by_hand_is_reported_at_once(project: Project) -> None:
    # Malformed YAML inside a closed frontmatter is not a write in progress: no waiting.
    sid, path = _session(project)
    broken = path.read_text().replace("tool: cursor", "tool: [cursor")
    path.write_text(broken)
    with pytest.raises(Exception, match="malformed frontmatter") as caught:
        project.checkpoint(CheckpointInput(work_completed=["x"]), session_id=path.stem)
    assert "another program" not in str(caught.value)
    assert path.read_text() == broken
