"""Honest context and a consistent CLI (issue #13): no vault is said with how to make one,
`checkpoint` never writes into another tool's session, usage errors are one line."""

from __future__ import annotations

from pathlib import Path

import pytest

# What these check is each command's output and exit code, not a process of its own.
pytestmark = pytest.mark.cli_in_process


@pytest.mark.parametrize("args", [
    ["remember", "x is y", "--type", "gotcha"],
    ["checkpoint", "--goal", "g"],
    ["search", "anything"],
    ["list"],
    ["memories"],
    ["recall"],
    ["files", "some-session"],
    ["show", "some-id"],
    ["rebuild-index"],
])
def test_no_vault_says_so_and_creates_nothing(run_ocm, repo: Path, args: list[str]) -> None:
    done = run_ocm(*args, check=False)
    assert done.returncode == 1, done.stdout
    assert done.stderr == (f"error: no ocm vault at {repo.resolve()}/.openCodeMemory: run "
                           f"`ocm init` in {repo.resolve()} to create one\n")
    assert "No results" not in done.stdout
    assert not (repo / ".openCodeMemory").exists()


def test_a_named_vault_that_does_not_exist(run_ocm, repo: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    for args in (["search", "x"], ["list"], ["remember", "x", "--type", "gotcha"]):
        done = run_ocm(*args, "--vault", str(missing), check=False)
        assert done.returncode == 1
        assert done.stderr.startswith(f"error: no ocm vault at {missing}: `ocm init --vault")
        assert not missing.exists()
    status = run_ocm("status", "--vault", str(missing), "--json")
    assert '"initialised": false' in status.stdout


def test_checkpoint_without_session_uses_the_callers_tool_or_refuses(run_ocm,
                                                                     repo: Path) -> None:
    from ocm.project import Project
    from ocm.vault.sessions import CheckpointInput

    run_ocm("init", "--agents", "none")
    project = Project.open(cwd=repo)
    claude = project.checkpoint(CheckpointInput(goal="Claude's work"), tool="claude-code")
    before = claude.path.read_bytes()
    codex = project.checkpoint(CheckpointInput(goal="Codex's work"), tool="codex")
    # Two tools have open sessions: a checkpoint that names neither is refused.
    done = run_ocm("checkpoint", "--done", "step one", check=False)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "sessions of 2 tools are open (claude-code, codex)" in done.stderr
    assert claude.path.read_bytes() == before and "step one" not in codex.path.read_text()
    # The caller's own tool picks its own open session, whichever is newer.
    run_ocm("checkpoint", "--tool", "Claude Code", "--done", "step one")
    assert "step one" in claude.path.read_text() and "step one" not in codex.path.read_text()
    # One tool open: no ambiguity.
    project.checkpoint(CheckpointInput(status="closed"), session_id=codex.id)
    run_ocm("checkpoint", "--done", "step two")
    assert "step two" in claude.path.read_text()


def test_unknown_tool_values_are_refused(run_ocm, repo: Path) -> None:
    run_ocm("init", "--agents", "none")
    for args in (["checkpoint", "--tool", "claud", "--goal", "g"], ["list", "--tool", "claud"],
                 ["search", "x", "--tool", "claud"]):
        done = run_ocm(*args, check=False)
        assert done.returncode == 1, args
        assert done.stderr.startswith("error: unknown tool 'claud': expected one of "
                                      "claude-code, cursor")
    assert not list((repo / ".openCodeMemory" / "sessions").glob("*.md"))
    assert run_ocm("list", "--tool", "codex").returncode == 0
    assert run_ocm("checkpoint", "--tool", "unknown", "--goal", "g").returncode == 0


# ----------------------------------------------------------------------------- consistency

DATE = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$"


@pytest.mark.parametrize("args", [
    ["search"],                                              # missing argument
    ["remember", "x", "--type", "gotcha", "--importance", "high"],  # bad value
    ["list", "--bogus"],                                     # unknown option
    ["no-such-command"],
    ["--bogus"],
    ["memories", "--status", "gone"],                        # bad choice
])
def test_usage_errors_are_one_line_and_exit_1(run_ocm, args: list[str]) -> None:
    done = run_ocm(*args, check=False)
    assert done.returncode == 1, done
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "--help" in done.stderr and done.stdout == ""


def test_help_still_exits_0(run_ocm) -> None:
    assert "Usage: ocm" in run_ocm("--help").stdout
    assert "Usage: ocm" in run_ocm().stdout


def test_hook_help_prints_help_and_runs_no_hook(run_ocm, repo: Path) -> None:
    run_ocm("init", "--agents", "none")
    for flag in ("--help", "-h"):
        done = run_ocm("hook", flag)
        assert done.returncode == 0 and "Agent hook entry point" in done.stdout
    assert not (repo / ".openCodeMemory" / ".hooks").exists()


def test_key_conflict_names_the_cli_flag(run_ocm) -> None:
    run_ocm("init", "--agents", "none")
    run_ocm("remember", "Pool size 10", "--type", "decision", "--key", "db.pool")
    done = run_ocm("remember", "Pool size 20", "--type", "decision", "--key", "db.pool",
                   check=False)
    assert done.returncode == 1
    assert "pass a --supersede-reason to replace it" in done.stderr
    assert "supersede_reason" not in done.stderr


def test_show_json_and_one_date_format(run_ocm, repo: Path) -> None:
    import json
    import re
    import subprocess

    run_ocm("init", "--agents", "none")
    (repo / "a.py").write_text("a = 1\n")
    subprocess.run(["git", "add", "a.py"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "a"], cwd=repo, check=True)
    made = json.loads(run_ocm("remember", "a.py sets a", "--type", "gotcha", "--file", "a.py",
                              "--json").stdout)
    (repo / "a.py").write_text("a = 2\n")
    shown = json.loads(run_ocm("show", made["id"], "--json").stdout)
    assert shown["id"] == made["id"] and shown["markdown"].startswith("---")
    assert re.match(DATE, shown["frontmatter"]["created"])
    assert json.loads(run_ocm("get", made["id"], "--json").stdout) == shown
    assert re.match(DATE, json.loads(run_ocm("search", "a.py", "--json").stdout)[0]["date"])
    assert re.match(DATE, json.loads(run_ocm("stale", "--json").stdout)[0]["updated"])
    assert re.match(DATE, json.loads(run_ocm("recall", "--json").stdout)["items"][0]["date"])
    run_ocm("checkpoint", "--tool", "codex", "--goal", "g")
    assert re.match(DATE, json.loads(run_ocm("list", "--json").stdout)[0]["date"])


def test_remember_help_lists_the_types(run_ocm) -> None:
    from ocm.vault.memories import MEMORY_TYPES

    text = " ".join(run_ocm("remember", "--help").stdout.split())
    for memory_type in MEMORY_TYPES:
        assert memory_type in text


def test_no_ansi_escapes_when_not_a_terminal(run_ocm, repo: Path) -> None:
    outputs = [run_ocm("init", "--agents", "none")]
    outputs.append(run_ocm("remember", "Stripe signature needs the raw body", "--type",
                           "gotcha", "--file", "src/webhooks.py"))
    run_ocm("checkpoint", "--tool", "codex", "--goal", "Make webhooks idempotent")
    for args in (["search", "stripe signature", "--explain"], ["list"], ["memories"],
                 ["status"], ["recall"], ["rebuild-index"], ["stale"], ["projects"],
                 ["doctor"], ["search", "nothing-like-this in cursor"]):
        outputs.append(run_ocm(*args, check=False))
    for done in outputs:
        assert "\x1b" not in done.stdout + done.stderr, done.args


def test_ids_and_paths_are_whole_lines(run_ocm, repo: Path, ocm_home: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    run_ocm("init", "--agents", "none")
    made = json.loads(run_ocm("remember", "A rather long title that a narrow table folds "
                              "across lines for sure", "--type", "gotcha", "--json").stdout)
    monkeypatch.setenv("COLUMNS", "40")  # a narrow terminal folds every cell
    for args in (["search", "narrow table folds"], ["memories"]):
        lines = run_ocm(*args).stdout.splitlines()
        assert any(line.startswith(f"1  {made['id']}  {made['markdown_path']}")
                   for line in lines), lines
    vault = repo.resolve() / ".openCodeMemory"
    assert f"{repo.name}  {vault}" in run_ocm("projects").stdout.splitlines()


def test_explain_shows_every_factor_and_the_filters(run_ocm) -> None:
    import json

    run_ocm("init", "--agents", "none")
    run_ocm("remember", "Stripe signature check needs the raw body", "--type", "gotcha")
    out = run_ocm("search", "stripe signature", "--explain").stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("#1 "))
    for factor in ("bm25f", "decay", "importance", "intent", "date", "superseded",
                   "threshold"):
        assert factor in out, factor
    assert " = " in line or " = " in out
    data = json.loads(run_ocm("search", "stripe signature", "--explain", "--json").stdout)
    explain = data[0]["explain"]
    product = explain["base"]
    for name in ("decay", "importance", "intent", "date", "superseded"):
        product *= explain[name]
    assert abs(product - explain["score"]) < 1e-3
    assert abs(data[0]["score"] - explain["score"]) < 1e-3
    empty = run_ocm("search", "stripe signature in cursor").stdout
    assert "No results." in empty
    assert "Filters: tool=cursor (from the query: tool=cursor)" in empty
    dated = run_ocm("search", "cursor sessions last week", "--explain").stdout
    assert "since=" in dated and "until=" in dated and "from the query: tool=cursor" in dated
    assert "listing" not in dated


def test_make_demo_installs_no_test_tools(tmp_path: Path) -> None:
    import subprocess

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(["make", "-n", "demo", f"VENV={tmp_path / 'venv'}"], cwd=root,
                          capture_output=True, text=True, check=True)
    installs = [ln for ln in done.stdout.splitlines() if "pip install" in ln]
    assert any(ln.rstrip().endswith("-e .") for ln in installs), done.stdout
    assert not any("[test]" in ln for ln in installs)
