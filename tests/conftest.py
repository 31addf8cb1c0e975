"""Shared fixtures: real temp git repos, a private OCM_HOME, vault snapshots."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from ocm.project import Project

VENV_BIN = Path(sys.executable).parent

# No per-example time limit for property tests: speed is measured under bench/, and a busy
# machine made Hypothesis's default 200 ms deadline fail a correct example now and then.
settings.register_profile("ocm", deadline=None)
settings.load_profile("ocm")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cli_in_process: run_ocm calls the `ocm` entry point "
                            "in the test's process (conftest.ocm_in_process); "
                            "cli_in_process(False): in a fresh process")
    config.addinivalue_line("markers", "hook_in_process: the hook harness's run_hook calls "
                            "ocm-hook's entry point in the test's process; "
                            "hook_in_process(False): as a process")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def _init_repo(path: Path) -> None:
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "dev@example.com")
    git(path, "config", "user.name", "Dev")
    (path / "README.md").write_text("# demo\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "init")


_TEMPLATES: dict[Callable[[Path], None], Path] = {}


def copy_of_repo(path: Path, build: Callable[[Path], None]) -> Path:
    """A repository `build` made once per process, copied into `path` (a real git repo with
    the same commits; copying costs ~10x less CPU than the git processes that made it).
    Files get fresh times, as if just written; git re-reads their stat data itself."""
    template = _TEMPLATES.get(build)
    if template is None:
        template = Path(tempfile.mkdtemp(prefix="ocm-repo-template-")) / "repo"
        template.mkdir()
        build(template)
        atexit.register(shutil.rmtree, template.parent, True)
        _TEMPLATES[build] = template
    shutil.copytree(template, path, symlinks=True, copy_function=shutil.copyfile,
                    dirs_exist_ok=True)
    return path


def make_repo(path: Path) -> Path:
    """A git repo on `main` with one commit (README.md), user Dev <dev@example.com>."""
    return copy_of_repo(path, _init_repo)


@pytest.fixture(autouse=True)
def ocm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own user vault and registry; the real home is never touched."""
    home = tmp_path / "ocm-home"
    monkeypatch.setenv("OCM_HOME", str(home))
    for name in ("OCM_VAULT", "OCM_PROJECT_DIR", "CLAUDE_PROJECT_DIR", "OCM_NOW",
                 "OCM_SEMANTIC"):
        monkeypatch.delenv(name, raising=False)
    return home


_HOOK_IN_PROCESS = [False]


@pytest.fixture(autouse=True)
def _hook_mode(request: pytest.FixtureRequest) -> Iterator[None]:
    """Whether this test is marked `hook_in_process` (and not `hook_in_process(False)`)."""
    marker = request.node.get_closest_marker("hook_in_process")
    _HOOK_IN_PROCESS[0] = marker is not None and marker.args[:1] != (False,)
    try:
        yield
    finally:
        _HOOK_IN_PROCESS[0] = False


def hook_in_process() -> bool:
    """The hook harness's run_hook calls ocm-hook's entry point in the test's process: the
    running test is marked `hook_in_process` (what it checks is what the hook says and
    leaves in the vault, not its process)."""
    return _HOOK_IN_PROCESS[0]


@pytest.fixture
def keyword_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Search without meaning (OCM_SEMANTIC=0), for the tests of BM25F's own scores."""
    monkeypatch.setenv("OCM_SEMANTIC", "0")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "proj")


@pytest.fixture
def project(repo: Path) -> Project:
    proj = Project.open(cwd=repo)
    proj.init()
    return proj


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every note-bearing file's bytes (derived index and lock files excluded)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_file() and not rel.startswith((".index/", ".locks/")):
            out[rel] = path.read_bytes()
    return out


# The warning filters of a Python process started without -W (pytest's own record warnings
# instead of printing them): what a command warns reaches its stderr as in a process.
_PROCESS_WARNING_FILTERS = [
    ("default", None, DeprecationWarning, "__main__", 0),
    *(("ignore", None, kind, None, 0) for kind in (DeprecationWarning,
                                                   PendingDeprecationWarning, ImportWarning,
                                                   ResourceWarning))]


def _warning_to_stderr(message: Warning | str, category: type[Warning], filename: str,
                       lineno: int, file: object = None, line: str | None = None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def ocm_in_process(args: list[str], cwd: Path, env: dict[str, str], input: str | bytes | None,
                   main: Callable[[], None] | None = None, name: str = "ocm"
                   ) -> subprocess.CompletedProcess:
    """`ocm ARGS` through the console script's own entry point (ocm.cli.lean.main, which
    hands all but a plain search to the click app) in this process: argv, cwd, environment
    (`env` whole: what it lacks is unset meanwhile) and the three streams as a fresh process
    would have them, the exit code from SystemExit,
    an uncaught exception as Python reports it (traceback on stderr, exit code 1). Saves the
    ~0.8 CPU-s each `ocm` process spends importing before it starts. `main`: another entry
    point in its place (`ocm.cli.main.main`, the click app alone; `ocm.hook.main` with
    `name` "ocm-hook"). Bytes `input`: the streams come back as bytes, as from
    `subprocess.run` without `text`."""
    import gc
    import traceback

    from click import formatting
    from click.testing import CliRunner

    from ocm.cli import lean

    saved_argv, saved_cwd, saved_env = sys.argv, os.getcwd(), dict(os.environ)
    code: int = 0
    unset: dict[str, str | None] = {name: None for name in os.environ if name not in env}
    with CliRunner().isolation(input=input or "", env={**unset, **env}) as (out, err, _):
        sys.argv = [name, *args]
        os.chdir(cwd)
        formatting.FORCED_WIDTH = None  # the isolation's 80: a process's help follows COLUMNS
        with warnings.catch_warnings():  # a process's filters, printed on its stderr
            warnings.filters[:] = _PROCESS_WARNING_FILTERS
            warnings._filters_mutated()  # what modules' registries hold is forgotten
            warnings.showwarning = _warning_to_stderr
            try:
                (main or lean.main)()
            except SystemExit as exc:
                if exc.code is None or isinstance(exc.code, int):
                    code = exc.code or 0
                else:  # sys.exit("message"), as Python reports it
                    print(exc.code, file=sys.stderr)
                    code = 1
            except Exception:
                traceback.print_exc()
                code = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                sys.argv = saved_argv
                os.chdir(saved_cwd)
                gc.enable()  # lean.main turns it off for a search the process then ends
        stdout, stderr = out.getvalue(), err.getvalue()
    if os.environ != saved_env:  # what the command set for itself (OPENBLAS_NUM_THREADS)
        os.environ.clear()
        os.environ.update(saved_env)
    if isinstance(input, bytes):
        return subprocess.CompletedProcess([name, *args], code, stdout, stderr)
    return subprocess.CompletedProcess([name, *args], code, stdout.decode(), stderr.decode())


@pytest.fixture
def run_ocm(repo: Path, ocm_home: Path, request: pytest.FixtureRequest
            ) -> Callable[..., subprocess.CompletedProcess[str]]:
    """The installed `ocm` console script in a fresh process, inside the repo; in this
    process (`ocm_in_process`) for a test marked `cli_in_process` (what it checks is the
    command's output and exit code, not a process of its own); `cli_in_process(False)` on
    a test of such a module keeps its processes (it needs what a new process sees, such as
    a repository changed since the last command)."""
    marker = request.node.get_closest_marker("cli_in_process")
    in_process = marker is not None and marker.args[:1] != (False,)

    def run(*args: str, cwd: Path | None = None, input: str | None = None,
            check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "OCM_HOME": str(ocm_home)}
        if in_process:
            done = ocm_in_process(list(args), cwd or repo, env, input)
        else:
            done = subprocess.run([str(VENV_BIN / "ocm"), *args], cwd=cwd or repo, env=env,
                                  capture_output=True, text=True, input=input, timeout=120)
        if check and done.returncode != 0:
            raise AssertionError(f"ocm {' '.join(args)} failed: {done.stderr}")
        return done

    return run
