"""`kill -9` of `ocm rebuild-index --json` leaves no process behind.

A real rebuild of a few hundred notes forks Whoosh sub-writers; the parent is killed while
they run, with its stdout on a pipe as a calling script would hold it. The pipe must reach
EOF (no sub-writer keeps it open) and every sub-writer must be gone.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ocm.indexer.subwriters import bind_forks_to_this_process
from ocm.project import Project

from .conftest import VENV_BIN

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc; sub-writers are bound with prctl")

NOTES = 600


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _vault_of(project: Project, notes: int) -> None:
    template = project.remember("Kafka consumers commit offsets after the write.", "gotcha",
                                title="Kafka offsets").path
    text = template.read_text()
    stem = template.stem
    for i in range(notes):
        body = f"Note {i}: " + " ".join(f"word{(i * 7 + j) % 997}" for j in range(300))
        note = text.replace(stem, f"bulk-{i:04d}").replace(
            "Kafka consumers commit offsets after the write.", body)
        (template.parent / f"bulk-{i:04d}.md").write_text(note)


def _read_to_eof(stream: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], 0.1)
        if ready and not os.read(stream, 65536):
            return True
    return False


def test_kill_9_of_a_rebuild_leaves_no_sub_writer(project: Project, repo: Path,
                                                  ocm_home: Path) -> None:
    _vault_of(project, NOTES)
    env = {**os.environ, "OCM_HOME": str(ocm_home)}
    proc = subprocess.Popen([str(VENV_BIN / "ocm"), "rebuild-index", "--json"], cwd=repo,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    children: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not children and proc.poll() is None and time.monotonic() < deadline:
            children = _children(proc.pid)
            time.sleep(0.005)
        assert children, "the rebuild forked no sub-writer"
        assert proc.poll() is None, "the rebuild finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=10) == -signal.SIGKILL
        assert _read_to_eof(proc.stdout.fileno(), within=15), "a sub-writer holds the pipe"
        deadline = time.monotonic() + 15
        while any(map(_alive, children)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [pid for pid in children if _alive(pid)] == []
    finally:
        for pid in children:  # only the sub-writers this test started, if any survived
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        proc.stdout.close()


def test_a_rebuild_with_sub_writers_indexes_every_note(project: Project, repo: Path,
                                                        ocm_home: Path) -> None:
    _vault_of(project, 250)
    env = {**os.environ, "OCM_HOME": str(ocm_home)}
    done = subprocess.run([str(VENV_BIN / "ocm"), "rebuild-index", "--json"], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert '"indexed": 251' in done.stdout


def test_a_forked_child_is_bound_to_its_parent() -> None:
    assert bind_forks_to_this_process()
    pid = os.fork()
    if pid == 0:  # the child reports the signal it will get when its parent dies
        deathsig = ctypes.c_int(-1)
        ctypes.CDLL(None).prctl(2, ctypes.byref(deathsig))  # PR_GET_PDEATHSIG
        os._exit(deathsig.value)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == signal.SIGKILL
