"""Fixtures for the end-to-end tests: one mock model server for the whole run, and per host
one real session (module-scoped, so every assertion about a host reads the same run)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ocm.vault.markdown import Document
from ocm.vault.sessions import SessionNote
from tests_e2e.hosts import CACHE, HOSTS, SETUP, Host
from tests_e2e.mock_model import MockModel, Recorded

VENV_BIN = Path(sys.executable).parent
TIMEOUT = float(os.environ.get("OCM_E2E_TIMEOUT") or 300)  # seconds for one host session
BRIEF_MARKER = "zq-brief-marker-7781"
PINNED = f"E2E pinned gotcha: the widget cache must be warmed first ({BRIEF_MARKER})"
# Variables that would tie a run to the developer's own host, account or vault.
_HOST_VARS = ("CLAUDE", "CURSOR", "GEMINI", "GOOGLE", "CODEX", "OPENAI", "ANTHROPIC",
              "OPENCODE", "VSCODE", "OCM_", "XDG_", "COPILOT", "GH_", "GITHUB_", "QWEN", "FACTORY",
              "DROID", "KILO")


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 120,
         ) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)


def pytest_report_header() -> list[str]:
    netns = os.environ.get("OCM_E2E_NETNS") == "1"
    links = sorted(name for _, name in socket.if_nameindex())  # this process's namespace
    where = "own network namespace" if netns else "host network (no namespace)"
    return [f"e2e: {where}, interfaces: {' '.join(links) or '?'}; host programs in {CACHE}"]


@dataclass(repr=False)
class HostRun:
    host: Host
    root: Path
    env: dict[str, str]
    init: subprocess.CompletedProcess
    proc: subprocess.CompletedProcess
    requests: list[Recorded] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"HostRun({self.host.name} {self.host.version}, exit {self.proc.returncode})"

    @property
    def vault(self) -> Path:
        return self.root / ".openCodeMemory"

    def output(self) -> str:
        """What to show when an assertion fails: the host's own output and ocm's hook log."""
        log = self.vault / ".hooks" / "hook.log"
        hook_log = log.read_text() if log.exists() else "(no hook.log)"
        return (f"requests: {self.root.parent / 'requests.jsonl'}\n"
                f"{self.host.binary} exit {self.proc.returncode}\n--- stdout\n"
                f"{self.proc.stdout[-3000:]}\n--- stderr\n{self.proc.stderr[-3000:]}\n"
                f"--- hook.log\n{hook_log[-3000:]}")

    def ocm(self, *args: str) -> Any:
        out = _run([str(VENV_BIN / "ocm"), *args, "--json"], self.root, self.env)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    def session_notes(self) -> list[SessionNote]:
        return [SessionNote(Document.parse(p.read_text()))
                for p in sorted((self.vault / "sessions").glob("*.md"))]

    def scripted(self) -> list[Recorded]:
        return [r for r in self.requests if r.scripted]


@pytest.fixture(scope="session")
def mock() -> Iterator[MockModel]:
    server = MockModel().start()
    yield server
    server.stop()


def _text(out: str | bytes | None) -> str:
    return out.decode("utf-8", "replace") if isinstance(out, bytes) else out or ""


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.upper().startswith(_HOST_VARS) and not k.lower().endswith("_proxy")}
    env.update(HOME=str(home), OCM_HOME=str(home / ".openCodeMemory"),
               XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
               XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".local/state"),
               NO_COLOR="1", CI="1", NO_PROXY="127.0.0.1,localhost",
               no_proxy="127.0.0.1,localhost")
    # The project's ocm (ocm init writes absolute paths to it) and python3 for the script.
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def _project(path: Path, env: dict[str, str]) -> None:
    path.mkdir(parents=True)
    for argv in (["git", "init", "-q", "-b", "main"],
                 ["git", "config", "user.email", "dev@example.com"],
                 ["git", "config", "user.name", "Dev"]):
        subprocess.run(argv, cwd=path, check=True, env=env)
    (path / "README.md").write_text("# shop\n")
    subprocess.run(["git", "add", "README.md"], cwd=path, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=path, check=True, env=env)


@pytest.fixture(scope="module", params=sorted(HOSTS))
def run(request: pytest.FixtureRequest, mock: MockModel,
        tmp_path_factory: pytest.TempPathFactory) -> HostRun:
    """One real session of the host: `ocm init --agents HOST` in a fresh git project, a
    pinned memory for the brief, then the program run non-interactively against the mock."""
    return host_session(HOSTS[request.param], mock, tmp_path_factory)


def host_session(host: Host, mock: MockModel, tmp_path_factory: pytest.TempPathFactory,
                 steps: list[tuple[str, Any]] | None = None,
                 extra_env: dict[str, str] | None = None,
                 follow_up: list[str] | None = None) -> HostRun:
    """The session `run` makes; `steps` replace the mock's script, `extra_env` goes to the
    program (and its hooks), `follow_up` is a second invocation (its arguments after the
    program) run in the same project after the first, e.g. to continue the session."""
    if host.name not in SETUP:
        pytest.skip(f"{host.name}: no scripted session for this host yet")
    if host.installed_version() != host.version or not host.exe.exists():
        pytest.skip(f"{host.package}@{host.version} is not installed in {CACHE} "
                    "(run `make e2e`, which needs node and npm)")
    tmp = tmp_path_factory.mktemp(host.name)
    home, root = tmp / "home", tmp / "shop"
    home.mkdir()
    env = _env(home)
    _project(root, env)
    # A host ocm cannot wire yet still runs: test_ocm_init_wires_the_host says why.
    init = _run([str(VENV_BIN / "ocm"), "init", "--agents", host.name], root, env)
    if init.returncode != 0:
        _run([str(VENV_BIN / "ocm"), "init", "--agents", "none"], root, env)
    pinned = _run([str(VENV_BIN / "ocm"), "remember", PINNED, "--type", "gotcha"], root, env)
    assert pinned.returncode == 0, pinned.stderr
    argv, extra = SETUP[host.name](host, root, home, mock.url)
    extra = {**extra, **(extra_env or {})}
    mock.reset(str(root))
    if steps is not None:
        mock.script.steps = steps
    for args in ([argv] + ([[str(host.exe), *follow_up]] if follow_up else [])):
        try:  # the mock records requests as they come: keep them even when the host hangs
            proc = _run(args, root, {**env, **extra}, timeout=TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            proc = subprocess.CompletedProcess(args, -1, _text(exc.stdout),
                                               f"timed out after {TIMEOUT} s\n"
                                               f"{_text(exc.stderr)}")
        if proc.returncode != 0:
            break
    requests = list(mock.requests)
    with (tmp / "requests.jsonl").open("w") as out:  # what the model saw, for debugging
        for rec in requests:
            out.write(json.dumps({"path": rec.path, "step": rec.step, "body": rec.body}) + "\n")
    return HostRun(host, root, env, init, proc, requests)
