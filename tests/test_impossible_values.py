"""A note whose frontmatter parses but holds a value no reader can use is a broken note like
one whose YAML does not parse: named with its field by `status` and `doctor`, skipped by
every read, never a traceback, and the good notes beside it are still found (issue #16).
Real vault, real index, the installed `ocm` and `ocm-hook` in fresh processes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ocm.project import Project
from ocm.vault.errors import NoteFormatError
from ocm.vault.markdown import Frontmatter
from tests.conftest import make_repo
from tests.fixtures.hooks.harness import HOOK, OCM, clean_env, payload

GOOD = "The staging database is reset every Sunday night"

# (case, frontmatter line that replaces the memory's own, the field the error names)
IMPOSSIBLE = [
    ("no-such-day", "created: 2024-02-30", "created"),
    ("date-is-a-list", "created: [2024-02-01, 2024-02-02]", "created"),
    ("date-is-words", "updated: last tuesday", "updated"),
    ("importance-word", "importance: high", "importance"),
    ("importance-true", "importance: true", "importance"),
    ("importance-out-of-range", "importance: 99", "importance"),
    ("title-mapping", "title: {a: 1}", "title"),
    ("tags-mapping", "tags: {x: y}", "tags"),
    ("status-list", "status: [active, resolved]", "status"),
]


@pytest.fixture
def vault(project: Project) -> Project:
    project.remember(f"{GOOD}.", "convention", title=GOOD)
    project.remember("Broken soon: the payment retry budget is three.", "gotcha",
                     title="Retry budget")
    project.search("staging")  # an index that held the note before it broke
    return project


def _break(project: Project, line: str, title: str = "Retry budget") -> Path:
    path = next(p for p in (project.vault.root / "memories").rglob("*.md")
                if f"title: {title}\n" in p.read_text())
    key = line.split(":", 1)[0]
    lines = path.read_text().splitlines()
    at = next((i for i, text in enumerate(lines) if text.startswith(f"{key}:")), None)
    if at is None:
        lines.insert(2, line)  # after `---` and `id:`
    else:
        lines[at] = line
    path.write_text("\n".join(lines) + "\n")
    return path


def test_every_listed_key_is_checked_where_frontmatter_is_parsed() -> None:
    for case, line, field in IMPOSSIBLE:
        with pytest.raises(NoteFormatError) as caught:
            Frontmatter.parse(["id: x", line], where="x.md")
        assert field in str(caught.value), case
    # What ocm writes, a person's own keys, and empty values all parse.
    good = ["id: x", "created: 2024-02-28T10:00:00", "updated: 2024-02-28", "importance: 7",
            "tags: [a, b]", "files: []", "title: 2024", "my_own: {any: thing}", "resolution:"]
    assert Frontmatter.parse(good).data["my_own"] == {"any": "thing"}


# Commands the read test runs: each must exit 0 without a traceback while the notes are broken.
READS = [("search", "staging", "database"), ("memories",), ("recall",), ("list",),
         ("search", "retry", "budget"), ("stale",)]
# One fact per broken note, unlike enough that no write supersedes another.
FACTS = ["the payment queue retries three times", "cron wakes the mailer at noon",
         "uploads above ten megabytes go to the cold bucket", "the search pod keeps two replicas",
         "invoices are numbered per tenant", "the ledger closes on the fifth",
         "webhook signatures use the raw body", "the cache warms from the nightly dump",
         "feature flags reload every minute"]


@pytest.fixture(scope="module")
def broken_reads(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One vault with a good note and one note per impossible value (each indexed before it
    broke), read once by every command in fresh `ocm` processes: the nine cases share the
    process starts, and each case then checks its own note in what they printed."""
    base = tmp_path_factory.mktemp("impossible")
    env = clean_env(base / "ocm-home", COLUMNS="400")  # tables on one line, titles unwrapped
    repo = make_repo(base / "proj")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OCM_HOME", env["OCM_HOME"])
        project = Project.open(cwd=repo)
        project.init()
        project.remember(f"{GOOD}.", "convention", title=GOOD)
        for (case, _line, _field), fact in zip(IMPOSSIBLE, FACTS, strict=True):
            project.remember(f"Broken soon: {fact}.", "gotcha", title=f"Retry budget {case}")
        # an index that held every note before it broke
        assert len(project.search("retry budget", limit=20)) == len(IMPOSSIBLE)
        broken = {case: _break(project, line, f"Retry budget {case}")
                  for case, line, _field in IMPOSSIBLE}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([OCM, *args], cwd=repo, env=env, capture_output=True, text=True,
                              timeout=120)

    return {"broken": broken, "status": run("status", "--json"),
            "doctor": run("doctor", "--json"), "reads": {args: run(*args) for args in READS},
            "found": run("search", "retry", "budget", "--json")}


@pytest.mark.parametrize(("case", "line", "field"), IMPOSSIBLE, ids=[c[0] for c in IMPOSSIBLE])
def test_read_commands_skip_the_note_and_name_it(broken_reads: dict[str, Any], case: str,
                                                 line: str, field: str) -> None:
    broken: Path = broken_reads["broken"][case]
    assert line in broken.read_text()
    status = broken_reads["status"]
    assert status.returncode == 0, status.stderr
    named = [why for where, why in json.loads(status.stdout)["broken_notes"].items()
             if broken.name in where]
    assert len(named) == 1 and field in named[0], named
    doctor = broken_reads["doctor"]
    assert "Traceback" not in doctor.stderr
    rows = [row for row in json.loads(doctor.stdout) if broken.name in row["what"]]
    assert len(rows) == 1 and rows[0]["status"] == "fail" and field in rows[0]["detail"]
    for args, done in broken_reads["reads"].items():
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr, args
        if args[0] in ("search", "memories", "recall") and "retry" not in args:
            assert GOOD in done.stdout, args
    memories = broken_reads["reads"][("memories",)].stdout
    assert GOOD in memories and "Retry budget" not in memories
    found = broken_reads["found"].stdout
    assert "Retry budget" not in found  # the index forgot it once it broke


def test_the_session_start_brief_still_comes(vault: Project) -> None:
    _break(vault, "created: 2024-02-30")
    env = clean_env(Path(os.environ["OCM_HOME"]))
    root = vault.vault.root.parent
    done = subprocess.run([HOOK, "claude-code", "SessionStart"],
                          input=payload("claude-code", "session-start", root, "sid-1"),
                          capture_output=True, env=env, cwd=root, timeout=60)
    assert done.returncode == 0
    out: dict[str, Any] = json.loads(done.stdout or b"{}")
    brief = json.dumps(out)
    assert GOOD in brief and "Traceback" not in done.stderr.decode()
