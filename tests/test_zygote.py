"""The zygote of a build's sub-writers (ocm/indexer/subwriters.py): a process forked once
that forks each sub-writer it is asked for; the builder gets each one's ticks and result as
from a sub-writer it forked itself, an error or a death as an error, and no process
outlives the builder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ocm.indexer.subwriters import SubWriterError, Zygote, bind_forks_to_this_process

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc; sub-writers are bound with prctl")


def _work(request: tuple[str, int], tick) -> tuple:
    what, count = request
    for _ in range(count):
        tick()
    if what == "fail":
        raise ValueError("no space left on the disk")
    if what == "die":
        os._exit(3)
    if what == "cut":  # killed while it writes its result (more than the pipe holds)
        return "x" * (8 << 20)
    return os.getpid(), os.getppid(), what * count


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.fixture
def zygote():
    assert bind_forks_to_this_process()
    made = Zygote(_work)
    yield made
    made.kill()


def test_each_writer_is_the_zygotes_child_and_hands_back_its_result(zygote: Zygote) -> None:
    first, second = zygote.writer(("a", 3)), zygote.writer(("b" * 100_000, 2))
    one, two = first.result(), second.result()
    assert one == (first.pid, zygote.pid, "aaa")
    assert two == (second.pid, zygote.pid, "b" * 200_000)  # a request larger than a pipe's
    assert first.ticks() == 3 and second.ticks() == 2
    assert zygote.pid != os.getpid() and first.pid != second.pid
    zygote.close()
    assert not _alive(zygote.pid) and not _alive(first.pid) and not _alive(second.pid)


def test_a_writers_error_or_death_is_an_error_and_the_zygote_goes_on(zygote: Zygote) -> None:
    with pytest.raises(SubWriterError, match="no space left on the disk"):
        zygote.writer(("fail", 1)).result()
    with pytest.raises(SubWriterError, match="died"):
        zygote.writer(("die", 0)).result()
    cut = zygote.writer(("cut", 1))
    deadline = time.monotonic() + 30
    while not cut.ticks():  # (its tick comes right before its result)
        assert time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(0.5)  # it writes its result until the pipe is full
    os.kill(cut.pid, signal.SIGKILL)
    with pytest.raises(SubWriterError, match="died"):
        cut.result()
    assert zygote.writer(("ok", 1)).result()[2] == "ok"


def test_a_dead_zygote_is_an_error_not_a_hang(zygote: Zygote) -> None:
    os.kill(zygote.pid, signal.SIGKILL)
    with pytest.raises((SubWriterError, OSError)):
        zygote.writer(("a", 1)).result()


def test_kill_9_of_the_builder_ends_the_zygote_and_its_writers(tmp_path: Path) -> None:
    """A builder (a real process) whose zygote has a writer running is killed: both go."""
    pids = tmp_path / "pids"
    script = textwrap.dedent(f"""
        import os, time
        from ocm.indexer.subwriters import Zygote, bind_forks_to_this_process
        def work(request, tick):
            time.sleep(60)
        assert bind_forks_to_this_process()
        zygote = Zygote(work)
        writer = zygote.writer(None)
        open({str(pids)!r}, "w").write(f"{{zygote.pid}} {{writer.pid}}")
        writer.result()
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 30
        while not pids.exists() or not pids.read_text():
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.02)
        zygote_pid, writer_pid = map(int, pids.read_text().split())
        assert _alive(zygote_pid) and _alive(writer_pid)
        proc.kill()
        proc.wait(timeout=10)
        deadline = time.monotonic() + 15
        while (_alive(zygote_pid) or _alive(writer_pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(zygote_pid) and not _alive(writer_pid)
    finally:
        proc.kill()
        proc.wait()
