"""Kilo CLI 7.7.7 as its own host (issue #27), wired by ocm's OpenCode code: the plugin in
`.kilo/plugins/` driven the way Kilo loads it, a whole session replayed through
`ocm-hook kilo` from the payloads the real program sent (tests/fixtures/capture/payloads/kilo,
copied from shared/reference/hosts/captured-2026-11/kilo-7.7.7), and its transcript read
from `kilo.db` (OpenCode's tables; the rows a real OpenCode session left)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

from ocm.vault.markdown import Document  # noqa: E402
from tests.test_hook_opencode import NODE, drive, recorded_db  # noqa: E402

# What the hooks say and leave in the vault: ocm-hook's entry point in this process
# (tests/fixtures/hooks/harness.py run_hook); processes where a test is about one.
pytestmark = pytest.mark.hook_in_process

RECORDED = Path(__file__).parent / "fixtures" / "capture" / "payloads" / "kilo"
PROBE = "/home/dev/probes/kilo-plugin/shop"
SID = "ses_de5b720e6ffeKXTRHdzlVeUQgN"
PROMPT = "E2E task: create src/greet.py, run it, fix it, remember the gotcha"


@pytest.fixture
def kilo_env(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {**env, "XDG_DATA_HOME": str(tmp_path / "data")}


def replay(repo: Path, env: dict[str, str], skip: tuple[str, ...] = ()) -> list[str]:
    """Every recorded payload through `ocm-hook kilo <event>`, as the plugin calls it; the
    hook's answers in order."""
    answers = []
    for path in sorted(RECORDED.glob("*.json")):
        event = path.stem.split("-", 1)[1]
        if event in skip:
            continue
        out = h.run_hook(["kilo", event], path.read_text().replace(PROBE, str(repo)).encode(),
                         env, cwd=repo)
        assert out.returncode == 0 and not out.stderr, out.stderr
        answers.append(out.stdout.decode())
    return answers


def front(path: Path) -> dict:
    return Document.parse(path.read_text()).frontmatter.data


def test_recorded_kilo_session(repo: Path, kilo_env: dict[str, str], tmp_path: Path) -> None:
    recorded_db(tmp_path / "data" / "kilo" / "kilo.db", repo, SID)
    answers = replay(repo, kilo_env)
    brief = json.loads(answers[0])["hookSpecificOutput"]["additionalContext"]
    [session] = h.sessions(repo)
    fm = front(session)
    assert fm["tool"] == "kilo" and fm["status"] == "closed"
    assert f"Current ocm session id: {session.stem}" in brief
    text = session.read_text()
    # Kilo quoted the one-word prompt it was given (`kilo run "..."`): kept as it came.
    assert PROMPT in text and "src/greet.py" in text
    assert "python3 src/greet.py" in text and "NameError" in text
    [fix] = list((repo / ".openCodeMemory" / "memories" / "bug_fix").glob("*.md"))
    memo = fix.read_text()
    assert "python3 src/greet.py" in memo and "NameError" in memo
    assert front(fix)["files"] == ["src/greet.py"]
    # The transcript came from kilo.db, into a file of ocm's own under .hooks/kilo/.
    assert list((repo / ".openCodeMemory" / ".hooks" / "kilo").glob("*.jsonl"))
    [note] = list((repo / ".openCodeMemory" / "transcripts").glob("*.md"))
    transcript = note.read_text()
    assert f"**User:** {PROMPT}" in transcript and "→ exit 1: NameError" in transcript


def test_kilo_reads_its_own_database_not_opencodes(repo: Path, kilo_env: dict[str, str],
                                                   tmp_path: Path) -> None:
    """Only OpenCode's database holds the session: Kilo's transcript says so in the log and
    the session still closes; `$KILO_DB` names another file (relative to Kilo's folder)."""
    recorded_db(tmp_path / "data" / "opencode" / "opencode.db", repo, SID)
    replay(repo, kilo_env)
    log = (repo / ".openCodeMemory" / ".hooks" / "hook.log").read_text()
    assert f"kilo session-idle: no session database at {tmp_path}/data/kilo/kilo.db" in log
    assert not list((repo / ".openCodeMemory" / "transcripts").glob("*.md"))
    [session] = h.sessions(repo)
    assert front(session)["status"] == "closed"
    from ocm.agents.kilo import KILO
    from ocm.agents.opencode import database

    assert database({**kilo_env, "KILO_DB": "other.db"}, KILO) == str(
        tmp_path / "data" / "kilo" / "other.db")
    assert database({**kilo_env, "OPENCODE_DB": "/x/o.db"}, KILO) == str(
        tmp_path / "data" / "kilo" / "kilo.db")


@pytest.mark.skipif(NODE is None, reason="node is not installed: the plugin cannot be loaded")
def test_kilo_plugin_session(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    """`ocm init --agents kilo` writes the plugin where Kilo loads it; driven as Kilo drives
    it, it reports as `kilo` and puts the brief in the system prompt."""
    wired = h.ocm_here(["init", "--agents", "kilo"], env, repo)
    assert wired.returncode == 0, wired.stderr
    assert not (repo / ".opencode").exists() and not (repo / "opencode.json").exists()
    config = json.loads((repo / ".kilo" / "kilo.json").read_text())
    assert config["$schema"] == "https://app.kilo.ai/config.json"
    assert config["mcp"]["ocm"]["command"][1:] == ["mcp"]
    assert "ocm:begin" in (repo / "AGENTS.md").read_text()
    out = drive(repo, env, tmp_path, ".kilo")
    [session] = h.sessions(repo)
    assert front(session)["tool"] == "kilo"
    assert len(out["system"]) == 2 and f"Current ocm session id: {session.stem}" in out[
        "system"][1]
    assert [p.name for p in (repo / ".openCodeMemory" / "memories" / "bug_fix").glob("*.md")]
    # Uninstall takes out exactly what init put in.
    gone = h.ocm_here(["uninstall", "--agents", "kilo"], env, repo)
    assert gone.returncode == 0, gone.stderr
    assert not (repo / ".kilo").exists() and not (repo / "AGENTS.md").exists()


def test_kilo_doctor(repo: Path, env: dict[str, str]) -> None:
    """Wired and never fired is said; a plugin calling a hook that is gone is said."""
    assert h.ocm_here(["init", "--agents", "kilo"], env, repo).returncode == 0
    checks = {c["what"]: c for c in json.loads(h.ocm_here(["doctor", "--json"], env, repo).stdout)}
    assert checks["kilo (project)"]["status"] == "ok", checks
    assert checks["kilo hooks"]["status"] == "warn"
    assert "restart Kilo" in checks["kilo hooks"]["fix"]
    # The clone that held ocm-hook moved: the plugin's command is gone.
    plugin = repo / ".kilo" / "plugins" / "ocm.js"
    text = plugin.read_text()
    start = text.index("const HOOK = [") + len("const HOOK = [")
    plugin.write_text(text[:start] + '"/gone/clone/.venv/bin/ocm-hook"' +
                      text[text.index("]", start):])
    checks = {c["what"]: c for c in json.loads(h.ocm_here(["doctor", "--json"], env, repo).stdout)}
    assert checks["kilo (project)"]["status"] == "warn"
    assert "ocm.js runs /gone/clone/.venv/bin/ocm-hook, which no longer exists" in checks[
        "kilo (project)"]["detail"]
