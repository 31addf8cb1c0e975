"""The lean `ocm search` entry point (ocm/cli/lean.py) against the click command: the same
bytes on stdout and stderr and the same exit code for every option, quoting, unicode, no
results and bad values, the lean one run as a real process (the installed console script),
the click one through its entry point in the test's process (conftest.ocm_in_process); and
what it leaves to click."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from ocm.cli import lean
from ocm.cli.main import cli
from ocm.cli.main import main as click_main
from ocm.project import KINDS, SEARCH_SCOPES, Project
from ocm.vault.clock import format_timestamp, now
from ocm.vault.sessions import CheckpointInput

from .conftest import VENV_BIN, make_repo, ocm_in_process

LEAN = [str(VENV_BIN / "ocm")]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A project with sessions and memories (unicode included), its index built and in
    sync, and the environment both processes run in."""
    base = tmp_path_factory.mktemp("lean")
    repo = make_repo(base / "proj")
    home = base / "home"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OCM_", "CLAUDE", "CURSOR", "GEMINI", "CODEX", "VSCODE"))}
    # One clock for both processes: a score's age decay moves with every second between
    # two runs on a loaded machine.
    env.update(OCM_HOME=str(home), COLUMNS="100",
               OCM_NOW=format_timestamp(now() + timedelta(hours=1)))
    saved = os.environ.get("OCM_HOME")
    os.environ["OCM_HOME"] = str(home)
    try:
        project = Project.open(vault=repo / ".openCodeMemory", cwd=repo)
        project.init()
        project.remember("The connection pool size must stay at 20 under load; café naïve "
                         "日本語 notes too.", "gotcha", title="Pool size under load",
                         files=["src/api/pool.py"], tags=["perf"])
        project.remember("We use JWT refresh tokens that rotate on every use.", "decision",
                         title="JWT refresh rotation", tags=["auth"])
        project.remember("Run `make migrate` before the pool tests.", "procedure",
                         title="Migrations before pool tests", files=["Makefile"])
        session = project.start_session("claude-code")
        project.checkpoint(CheckpointInput(goal="Tune the pool and the JWT refresh",
                                           work_completed=["raised the pool size"],
                                           decisions=["keep refresh rotation"]),
                           session_id=session.id, tool="claude-code")
        project.search("pool")  # the index in sync before either process runs
    finally:
        if saved is None:
            os.environ.pop("OCM_HOME", None)
        else:
            os.environ["OCM_HOME"] = saved
    (base / "a-file").write_text("not a folder\n")
    return {"repo": str(repo), "vault": str(repo / ".openCodeMemory"),
            "file": str(base / "a-file"), "missing": str(base / "no-vault-here"), **{
                f"env:{k}": v for k, v in env.items()}}


def _run(command: list[str], args: list[str], world: dict[str, str]
         ) -> subprocess.CompletedProcess[bytes]:
    env = {k[4:]: v for k, v in world.items() if k.startswith("env:")}
    return subprocess.run([*command, "search", *args], cwd=world["repo"], env=env,
                          capture_output=True, timeout=120, check=False)


CASES = [
    ["--json", "jwt", "refresh"],
    ["jwt", "refresh"],
    ["--explain", "pool"],
    ["--chunks", "--json", "pool"],
    ["--chunks", "pool"],
    ["--limit", "1", "pool"],
    ["--limit=2", "--json", "pool"],
    ["--kind", "memory", "pool"],
    ["--kind=session", "--json", "pool"],
    ["--type", "gotcha", "--type", "procedure", "--json", "pool"],
    ["--status", "active", "pool"],
    ["--tool", "claude-code", "--json", "pool"],
    ["--since", "2000-01-01", "--until", "2999-01-01", "--json", "pool"],
    ["--since", "last week", "pool"],
    ["--file", "pool.py", "--json", "pool"],
    ["--tag", "perf", "pool"],
    ["--scope", "user", "pool"],
    ["--scope", "global", "--json", "pool"],
    ["--include-resolved", "--json", "pool"],
    ["--author", "Dev", "--json", "pool"],
    ["--vault", "{vault}", "--json", "pool"],
    ["pool size", "--json", "under load"],  # one argument with a space; options anywhere
    ["--", "--json", "pool"],  # after `--` an option is a word
    ["-", "pool"],
    ["café", "naïve"],
    ["--json", "日本語"],
    ["zzzqqq"],  # no results
    ["--json", "zzzqqq"],
    ["zzzqqq", "--tag", "perf"],  # no results: the filters line
    ["last", "week"],  # a listing: filters only
    ["--json", "--json", "--limit", "3", "--limit", "1", "pool"],  # the last value wins
    # bad values: one line on stderr, exit code 1
    ["--limit", "0", "pool"],
    ["--limit", "101", "pool"],
    ["--limit", "-3", "pool"],
    ["--limit", "abc", "pool"],
    ["--limit", " 2", "pool"],
    ["--kind", "nope", "pool"],
    ["--scope", "nope", "pool"],
    ["--status", "bogus", "pool"],
    ["--since", "garbage", "pool"],
    ["--until", "garbage", "pool"],
    ["--tool", "", "pool"],
    ["--vault", "{file}", "pool"],
    ["--vault", "{missing}", "pool"],
    ["--bogus", "pool"],
    ["--json=1", "pool"],
    ["--limit"],
    [],
    ["--json"],
    ["-h"],
    ["--help"],
]


@pytest.mark.parametrize("args", CASES, ids=[" ".join(c) or "(none)" for c in CASES])
def test_lean_and_click_print_the_same(args: list[str], world: dict[str, str]) -> None:
    args = [a.format(**world) for a in args]
    lean_run = _run(LEAN, args, world)
    env = {k[4:]: v for k, v in world.items() if k.startswith("env:")}
    click_run = ocm_in_process(["search", *args], Path(world["repo"]), env, None, click_main)
    assert (lean_run.returncode, lean_run.stdout, lean_run.stderr) == (
        click_run.returncode, click_run.stdout.encode(), click_run.stderr.encode())
    if lean_run.returncode:
        assert lean_run.returncode == 1
        assert lean_run.stderr.decode().count("\n") == 1, lean_run.stderr
        assert lean_run.stderr.startswith(b"error: ")
        assert lean_run.stdout == b""


def test_the_cases_find_something(world: dict[str, str]) -> None:
    found = _run(LEAN, ["--json", "pool"], world)
    assert found.returncode == 0 and b'"id"' in found.stdout
    assert b"Pool size under load" in _run(LEAN, ["pool"], world).stdout


def _loaded_by_a_search(world: dict[str, str], modules: tuple[str, ...]) -> str:
    """'<exit code> [those of `modules` loaded]' after `ocm search --json pool` in a new
    process; its output must hold a hit. (Told by an exit handler: a search's process
    ends at once after it, the exit handlers run; see ocm/cli/exiting.py.)"""
    env = {k[4:]: v for k, v in world.items() if k.startswith("env:")}
    code = ("import atexit, sys\nfrom ocm.cli import lean\nsys.argv = ['ocm', 'search', "
            "'--json', 'pool']\natexit.register(lambda: sys.stderr.write(str(sorted("
            f"m for m in {modules!r} if m in sys.modules))))\nlean.main()\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=world["repo"], env=env,
                          capture_output=True, timeout=120, check=False)
    assert b'"id"' in done.stdout
    return f"{done.returncode} {done.stderr.decode()}"


def test_a_search_imports_no_click_rich_mcp_or_git(world: dict[str, str]) -> None:
    assert _loaded_by_a_search(world, ("click", "rich", "mcp", "git")) == "0 []"


@pytest.mark.parametrize("args", [
    ["-h"], ["--help"], ["--bogus", "x"], ["--json=1", "x"], ["--limit"], [], ["--json"],
    ["--limit", "abc", "x"], ["--limit", "+3", "x"], ["--limit", "٣", "x"],
    ["--kind", "Memory", "x"], ["--scope", "", "x"], ["-x", "y"],
])
def test_what_goes_to_click(args: list[str]) -> None:
    assert lean.parse_search(args) is None


def test_what_the_lean_parser_reads() -> None:
    parsed = lean.parse_search(["a", "--type", "gotcha", "--limit=3", "--json", "b", "--type",
                                "decision", "--", "--chunks", "-"])
    assert parsed == {"query": ("a", "b", "--chunks", "-"), "types": ("gotcha", "decision"),
                      "limit": 3, "as_json": True}


def test_the_lean_parser_knows_every_option_of_the_click_command() -> None:
    command = cli.commands["search"]
    flags = {p.opts[0]: p.name for p in command.params if getattr(p, "is_flag", False)}
    valued = {p.opts[0]: p.name for p in command.params
              if p.param_type_name == "option" and not getattr(p, "is_flag", False)}
    assert flags == lean.FLAGS
    assert valued == lean.VALUED
    choices = {p.name: tuple(p.type.choices) for p in command.params
               if hasattr(p.type, "choices")}
    assert choices == {"kind": KINDS, "scope": SEARCH_SCOPES}


def test_the_console_script_is_the_lean_entry_point() -> None:
    text = Path(VENV_BIN / "ocm").read_text()
    assert "from ocm.cli.lean import main" in text


def test_a_lean_search_finds_a_note_edited_in_place(project: Project, run_ocm) -> None:
    run_ocm("remember", "Kafka consumer lag alarms fire at 10k", "--type", "gotcha")
    found = json.loads(run_ocm("search", "--json", "kafka").stdout)
    path = Path(found[0]["markdown_path"])
    # An editor rewrites the file in place: same size, the folder's mtime unchanged.
    before = path.stat()
    folder_mtime = path.parent.stat().st_mtime_ns
    text = path.read_text().replace("Kafka", "Kafkb")
    with open(path, "r+", encoding="utf-8") as handle:
        handle.write(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1))
    assert path.stat().st_size == before.st_size
    assert path.parent.stat().st_mtime_ns == folder_mtime
    assert json.loads(run_ocm("search", "--json", "kafkb").stdout)
    assert json.loads(run_ocm("search", "--json", "kafka").stdout) == []



def test_a_search_of_an_index_up_to_date_imports_no_lock_or_write_rules(
        world: dict[str, str]) -> None:
    """Once the index is up to date, a search takes no lock, writes no note and makes no
    brief: filelock (logging, platform), the session hand-over and redaction rules and the
    brief's stay unloaded."""
    _run(LEAN, ["--json", "pool"], world)  # the index brought up to date
    assert _loaded_by_a_search(world, ("filelock", "ocm.vault.autosummary",
                                       "ocm.vault.secrets.redact", "ocm.indexer.recall")) == "0 []"


def test_a_search_loads_no_secrets_module_or_session_hand_over(world: dict[str, str]) -> None:
    """`secrets` (hmac, hashlib's OpenSSL: ~8 ms) made only the random part of a temporary
    file's name, and the hand-over's patterns compile on import: a search of an index up
    to date needs neither."""
    _run(LEAN, ["--json", "pool"], world)  # the index brought up to date
    assert _loaded_by_a_search(world, ("secrets", "ocm.vault.handover")) == "0 []"


def test_a_search_loads_no_masked_arrays(world: dict[str, str]) -> None:
    """numpy's masked arrays (`np.unique` loads them, ~4 ms of a new process) are not
    needed to embed the query; numpy itself is (the search's meaning)."""
    _run(LEAN, ["--json", "pool"], world)  # the index brought up to date
    assert _loaded_by_a_search(world, ("numpy", "numpy.ma")) == "0 ['numpy']"


def test_a_search_runs_no_word_variations_or_foreign_stemmers(world: dict[str, str]) -> None:
    # ocm/indexer/whooshlean.py: morph_en is in sys.modules but its code has not run (its
    # module has no `variations` of its own, only the deferring one), and of the snowball
    # stemmers only the English one (the analyzer's) is imported.
    loaded = _loaded_by_a_search(world, (
        "whoosh.lang.snowball.english", "whoosh.lang.snowball.dutch",
        "whoosh.lang.snowball.russian", "whoosh.lang.snowball.bases"))
    assert loaded == "0 ['whoosh.lang.snowball.bases', 'whoosh.lang.snowball.english']"


# Says when the process ends at once (`os._exit`, no interpreter teardown).
AT_ONCE = ("import os\n_exit = os._exit\n"
           "os._exit = lambda code: (os.write(2, b'at once;'), _exit(code))")


def _search_process(world: dict[str, str], setup: str) -> subprocess.CompletedProcess[bytes]:
    """`ocm search --json pool` through `lean.main` in a new process, after `setup` ran in
    its `__main__`."""
    env = {k[4:]: v for k, v in world.items() if k.startswith("env:")}
    code = (f"import atexit, sys, threading, time\n{setup}\nfrom ocm.cli import lean\n"
            "sys.argv = ['ocm', 'search', '--json', 'pool']\nlean.main()\n")
    return subprocess.run([sys.executable, "-c", code], cwd=world["repo"], env=env,
                          capture_output=True, timeout=120, check=False)


def test_a_search_process_ends_at_once_once_its_answer_is_out(world: dict[str, str]) -> None:
    """No teardown of what the search made, but the exit handlers run and the whole answer
    is out, exit code 0."""
    done = _search_process(world, (
        f"{AT_ONCE}\natexit.register(lambda: sys.stderr.write('handlers ran;'))"))
    assert (done.returncode, done.stderr) == (0, b"handlers ran;at once;")
    assert "Pool size under load" in {hit["title"] for hit in json.loads(done.stdout)}


def test_a_search_process_waits_for_a_thread_still_working(world: dict[str, str]) -> None:
    """A thread that is not a daemon, still running when the answer is out, finishes its
    work: the process then exits as Python does."""
    done = _search_process(world, (
        f"{AT_ONCE}\nfrom ocm.cli import render\nout = threading.Event()\n"
        "emit = render.emit_json\nrender.emit_json = lambda hits: (emit(hits), out.set())\n"
        "threading.Thread(target=lambda: (out.wait(), time.sleep(0.3), "
        "sys.stderr.write('worked;'))).start()"))
    assert (done.returncode, done.stderr) == (0, b"worked;")
    assert json.loads(done.stdout)
