"""Bad input through the CLI, the hook entry point and the MCP tools: a clear error (for
hooks: exit 0 and a logged no-op) and a byte-for-byte unchanged vault, every time."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_stress_writers import load_stress

stress = load_stress()
CLI_CASES = stress.bad_cli_cases() + stress.bad_hook_cases()
MCP_CASES = stress.mcp_cases()


@pytest.fixture(scope="module")
def bad_vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("bad")
    repo = stress.make_repo(base / "repo")
    home = base / "home"
    return repo, home, stress.prepare_bad_input(repo, home)


@pytest.fixture(autouse=True)
def in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stress, "IN_PROCESS", True)


def test_at_least_40_cases() -> None:
    assert len(CLI_CASES) >= 40
    assert len(MCP_CASES) >= 20
    assert len({c.name for c in CLI_CASES} | {c[0] for c in MCP_CASES}) == (
        len(CLI_CASES) + len(MCP_CASES))


@pytest.mark.parametrize("case", CLI_CASES, ids=lambda c: c.name)
def test_cli_and_hook_refuse_and_change_nothing(case, bad_vault) -> None:
    repo, home, ctx = bad_vault
    assert stress.check_bad_case(case, repo, home, ctx) == []


@pytest.mark.parametrize("case", MCP_CASES, ids=lambda c: c[0])
def test_mcp_refuses_and_changes_nothing(case, bad_vault) -> None:
    repo, home, ctx = bad_vault
    ran, problems = stress.run_mcp_cases(repo, home, ctx, [case])
    assert (ran, problems) == (1, [])


def test_other_notes_still_index_after_all_that(bad_vault) -> None:
    repo, home, ctx = bad_vault
    assert stress.still_indexes(repo, home, ctx) == []


def test_broken_notes_are_listed_not_fatal(bad_vault) -> None:
    repo, home, ctx = bad_vault
    for case in CLI_CASES:
        if case.setup is not None:
            case.setup(repo, home, ctx)
    done = stress.run_cli(["status", "--json"], repo, home)
    assert done.returncode == 0
    assert "broken-yaml" in done.stdout.decode()


def test_lone_surrogate_creates_no_session(project) -> None:
    """Regression: a lone surrogate (valid JSON `\\ud800`) passed validation, created an
    empty session note for a new host id, then crashed on encode."""
    from ocm.vault.errors import InvalidInput
    from ocm.vault.sessions import CheckpointInput

    before = stress.snapshot(project.vault.root)
    with pytest.raises(InvalidInput):
        project.checkpoint(CheckpointInput(goal="bad \ud800 text"), session_id="host-1")
    with pytest.raises(InvalidInput):
        project.remember("bad \udcff", "gotcha")
    assert stress.snapshot(project.vault.root) == before


def test_bom_and_crlf_notes_are_edited_in_their_own_style(project) -> None:
    """A BOM and CRLF line endings are not bad input: the note keeps both, and a person's
    extra section, through a checkpoint."""
    from ocm.vault.folder import read_document
    from ocm.vault.sessions import CheckpointInput, SessionNote

    result = project.checkpoint(CheckpointInput(goal="Port the parser."), tool="claude-code")
    text = result.path.read_text(encoding="utf-8")
    text += "\n## My Notes\n\nkeep this line\n"
    result.path.write_bytes(("\ufeff" + text.replace("\n", "\r\n")).encode("utf-8"))
    project.checkpoint(CheckpointInput(work_completed=["wrote the lexer"]), session_id=result.id)
    raw = result.path.read_bytes()
    assert raw.startswith("\ufeff".encode())
    assert b"\n" not in raw.replace(b"\r\n", b"")
    assert b"keep this line" in raw
    assert SessionNote(read_document(result.path)).items("work completed") == ["wrote the lexer"]
