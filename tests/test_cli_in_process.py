"""`conftest.ocm_in_process` (the `cli_in_process` tests' `run_ocm`) answers as the installed
`ocm` in a fresh process does: the same exit code, stdout and stderr; and it leaves the test's
process as it found it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import VENV_BIN, ocm_in_process


@pytest.mark.parametrize("args", [
    ["search", "anything", "--json"],  # no vault yet: one line, exit 1
    ["remember", "x is y", "--type", "nonsense"],  # a usage error
    ["list", "--limit"],  # click's own error
    ["status", "--json"],
])
def test_in_process_answers_as_a_fresh_process(repo: Path, ocm_home: Path,
                                               args: list[str]) -> None:
    env = {**os.environ, "OCM_HOME": str(ocm_home)}
    real = subprocess.run([str(VENV_BIN / "ocm"), *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120)
    here = ocm_in_process(args, repo, env, None)
    assert (here.returncode, here.stdout, here.stderr) == (
        real.returncode, real.stdout, real.stderr)


def test_in_process_leaves_argv_cwd_environment_and_gc_alone(repo: Path,
                                                             ocm_home: Path) -> None:
    import gc

    before = (list(sys.argv), os.getcwd(), dict(os.environ))
    env = {k: v for k, v in os.environ.items() if k != "HOME"} | {
        "OCM_HOME": str(ocm_home), "OCM_TEST_ONLY": "1"}
    assert ocm_in_process(["init", "--agents", "none"], repo, env, None).returncode == 0
    done = ocm_in_process(["search", "anything", "--json"], repo, env, None)
    assert done.returncode == 0 and done.stdout.strip() == "[]"
    assert (list(sys.argv), os.getcwd(), dict(os.environ)) == before
    assert gc.isenabled()
