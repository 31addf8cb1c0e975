"""`make demo PY=<a Python older than 3.11>` (issue #27): one line naming the version, exit
status non-zero, and no venv made that a later `make demo` would trip over."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_old_python_is_refused_before_a_venv_is_made(tmp_path: Path) -> None:
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    old = tmp_path / "python3.10"
    old.write_text('#!/bin/sh\n[ "$1" = "-V" ] && { echo "Python 3.10.13"; exit 0; }\nexit 1\n')
    old.chmod(0o755)
    out = subprocess.run(["make", "demo", f"PY={old}"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode != 0
    assert f"ocm needs Python >= 3.11; PY={old} is Python 3.10.13" in out.stderr, out.stderr
    assert not (tmp_path / ".venv").exists()
