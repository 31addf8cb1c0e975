# ruff: noqa: F811 - the hook harness fixtures `env`/`repo` are parameters, read as redefinitions
"""Secrets through every write path: each kind of the corpus redacted to its marker, the
shapes that must be kept, redaction before every cut, and the fields the audit found
unredacted (slug, key, tags, file paths, references, imports, MCP arguments, the hook
journal). Every check greps the bytes of the vault (notes, `.index/`, `.hooks/`) and
`OCM_HOME`.

The `ocm` commands run through the entry point in this process (harness.ocm_here): what
they are checked by is the bytes they leave. Secrets are assembled at run time
(bench/stress.py), so this file holds nothing a scanner would flag.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from ocm.mcp_server.server import build_server
from ocm.project import Project
from ocm.vault.secrets.redact import REDACTION_KINDS, find_secrets, redact
from tests.test_stress_writers import load_stress

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "hooks"))
import harness as h  # noqa: E402
from harness import env, repo  # noqa: E402, F401 - shared fixtures

stress = load_stress()
CORPUS = stress.secret_corpus()
SID = "secret-paths-1"


def _needles(secret: str) -> list[bytes]:
    """The secret, its lower-cased form (slugs lower-case), its first 16 characters (a cut
    must not leave the front half) and 12 from its middle."""
    out = {secret, secret.lower()}
    if "\n" not in secret and len(secret) >= 24:
        out |= {secret[:16], secret[len(secret) // 2 - 6 : len(secret) // 2 + 6]}
    return [n.encode() for n in out]


def leaks(roots: list[Path], secrets: list[str]) -> list[str]:
    found = []
    for root in roots:
        for path in root.rglob("*"):
            if not path.is_file():
                continue
            data = path.read_bytes()
            found += [f"{path}: {needle[:16]!r}" for secret in secrets
                      for needle in _needles(secret) if needle in data]
    return found


# ----------------------------------------------------------------------------- the detector


def test_corpus_has_at_least_80_kinds_all_declared() -> None:
    kinds = {kind for kind, *_ in CORPUS}
    assert len(kinds) >= 80
    assert kinds <= set(REDACTION_KINDS)


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: f"{c[0]}:{c[1][:20]}")
def test_every_shape_becomes_its_marker_and_nothing_else_changes(
        case: tuple[str, str, str, str]) -> None:
    kind, before, secret, after = case
    assert redact(before + secret + after) == f"{before}[REDACTED:{kind}]{after}"
    assert redact(redact(before + secret + after)) == redact(before + secret + after)


KEPT = [
    "max_token: 100000",
    "pass: --no-verify",
    "secret: tls-secret",
    "git checkout 3f9c2a7e5b1d4c8e9f0a6b2c3d4e5f6071829304 && git log -1",
    "trace 550e8400-e29b-41d4-a716-446655440000 in the logs",
    "HEROKU_APP=payments-staging",
    "docker run -p 8080:80 nginx",
    "docker login -p $REGISTRY_PASSWORD registry.local",
    "the token is expired, ask for a new one",
    "the password is wrong",
    "curl -u $USER:$PASS https://api.local",
    "see https://user:pass@host.example/path in the docs",
    "    Token:              '#dddddd',",
    "refresh_token: RefreshTokenT,",
    "return BasicAuth(username=username, password=password)",
    "token = Punctuation",
    "pass the --token flag, read --password options in the manual",
    "private_key: PrivateKeyTypes,",
    "task SK-1234 is blocked",
    "Authorization: Basic <base64 of user:password>",
]


@pytest.mark.parametrize("text", KEPT)
def test_ordinary_shapes_are_kept(text: str) -> None:
    assert find_secrets(text) == []


# ----------------------------------------------------------------------------- hooks


def _secret(kind: str) -> str:
    return next(secret for k, _b, secret, _a in CORPUS if k == kind)


@pytest.mark.hook_in_process  # what the hook writes, not its process
def test_hooks_redact_before_cutting_prompt_command_and_error(repo: Path,
                                                              env: dict[str, str]) -> None:
    """A secret straddling each cut (prompt 8,000 / 2,000, command 500, error line 300)
    leaves no half behind, in the journal or in the note."""
    # Kinds of a fixed length: a cut through one leaves a front the redactor cannot see.
    gh, slack, hf = _secret("aws_access_key"), _secret("npm_token"), _secret("google_api_key")
    out = h.run_hook(["claude-code", "session-start"],
                     h.payload("claude-code", "session-start", repo, SID), env, cwd=repo)
    assert out.returncode == 0
    for cut in (2000, 8000):
        prompt = "word " * ((cut - 10) // 5) + gh + " tail"
        assert cut - 30 < prompt.index(gh) < cut
        h.run_hook(["claude-code", "user-prompt-submit"],
                   h.payload("claude-code", "user-prompt-submit", repo, SID, prompt=prompt),
                   env, cwd=repo)
    command = "pytest " + "-q " * 160 + slack
    assert 470 < command.index(slack) < 500
    error = "E   AssertionError: " + "x" * 260 + " " + hf + " more"
    assert 270 < error.index(hf) < 300
    h.run_hook(["claude-code", "post-tool-use-failure"], h.payload(
        "claude-code", "post-tool-use-failure-bash", repo, SID,
        tool_input={"command": command}, error=f"Exit code 1\n{error}"), env, cwd=repo)
    journal = (repo / ".openCodeMemory" / ".hooks" / "journal.jsonl").read_text()
    assert journal.count('"k": "prompt"') + journal.count('"k":"prompt"') == 2
    h.fold(repo)
    assert leaks([repo / ".openCodeMemory", Path(env["OCM_HOME"])], [gh, slack, hf]) == []


@pytest.mark.hook_in_process  # what the hook writes, not its process
def test_file_paths_in_hooks_are_redacted_in_the_journal(repo: Path,
                                                         env: dict[str, str]) -> None:
    token = _secret("github_token")
    path = repo / "cfg" / f"{token}.json"
    h.run_hook(["claude-code", "post-tool-use"], h.payload(
        "claude-code", "post-tool-use-write", repo, SID,
        tool_input={"file_path": str(path), "content": "{}"}), env, cwd=repo)
    journal = (repo / ".openCodeMemory" / ".hooks" / "journal.jsonl").read_text()
    assert "[REDACTED:github_token]" in journal
    h.fold(repo)
    assert leaks([repo / ".openCodeMemory", Path(env["OCM_HOME"])], [token]) == []


# ----------------------------------------------------------------------------- CLI fields


def test_cli_slug_title_key_tags_files_and_references(repo: Path, env: dict[str, str]) -> None:
    gh, stripe, dop = _secret("github_token"), _secret("stripe_key"), _secret("digitalocean_pat")
    out = h.ocm_here(["checkpoint", "--tool", "claude-code", "--slug", f"deploy {gh}",
                 "--goal", f"Deploy with {stripe}", "--reference", f"https://x.io/?k={dop}::ref",
                 "--plan-file", f"plans/{gh}.md::{stripe}"], env, repo)
    assert out.returncode == 0, out.stderr
    out = h.ocm_here(["remember", f"CI token {dop} rotates monthly", "--type", "gotcha",
                 "--title", f"token {gh}", "--key", f"ci-{stripe}", "--tag", dop,
                 "--file", f"src/{gh}.py"], env, repo)
    assert out.returncode == 0, out.stderr
    assert h.ocm_here(["search", "rotates monthly"], env, repo).returncode == 0
    vault = repo / ".openCodeMemory"
    assert leaks([vault, Path(env["OCM_HOME"])], [gh, stripe, dop]) == []
    names = " ".join(p.name for p in vault.rglob("*.md"))
    assert "redacted" in names  # the slug and the title's file name kept the marker's words


# ----------------------------------------------------------------------------- MCP, import


def test_mcp_arguments_are_redacted_in_every_field(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OCM_HOME", str(tmp_path / "home"))
    proj = h.make_repo(tmp_path / "proj")
    h.init_vault(proj, {"OCM_HOME": str(tmp_path / "home")})
    cases = [c for c in CORPUS if "\n" not in c[2]]
    secrets = [secret for _k, _b, secret, _a in cases]
    # Each secret in its context (`HEROKU_API_KEY=<uuid>`): bare, some kinds are random text.
    texts = [f"{b}{s}{a}".strip() for _k, b, s, a in cases]
    joined = "\n".join(texts)
    bare = [s for k, _b, s, _a in cases if k not in stress.CONTEXT_KINDS]

    async def main() -> None:
        async with Client(build_server(proj), raise_exceptions=True) as c:
            result = await c.call_tool("ocm__checkpoint", {
                "slug": "mcp", "goal": f"goal {texts[0]}", "work_completed": texts,
                "decisions": [f"**d:** {t}" for t in texts], "tags": texts[:3],
                "references": [{"url": f"https://x.io/{s}", "title": t}
                               for s, t in zip(bare[:5], texts[5:10], strict=True)],
                "plan_files": [{"path": f"p/{bare[1]}.md", "header": texts[2]}]})
            assert not result.is_error, result
            result = await c.call_tool("ocm__remember", {
                "content": joined, "type": "decision", "title": texts[3],
                "key": f"k-{bare[4]}", "tags": texts[5:8], "files": [f"src/{bare[8]}"]})
            assert not result.is_error, result
            await c.call_tool("ocm__search", {"query": "goal"})

    anyio.run(main)
    assert leaks([proj / ".openCodeMemory", tmp_path / "home"], secrets) == []


def test_import_redacts_names_observations_and_restored_backups(
        repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    cases = [c for c in CORPUS if "\n" not in c[2]]
    secrets = [secret for _k, _b, secret, _a in cases]
    src = tmp_path / "memory.jsonl"
    src.write_text("\n".join(json.dumps({
        "type": "entity", "name": f"svc {i}", "entityType": "warning",
        "observations": [f"{b}{s}{a}", "second fact"]}) for i, (_k, b, s, a) in enumerate(cases))
        + "\n")
    out = h.ocm_here(["import", str(src)], env, repo)
    assert out.returncode == 0, out.stderr
    assert h.ocm_here(["search", "second fact"], env, repo).returncode == 0
    assert leaks([repo / ".openCodeMemory", Path(env["OCM_HOME"])], secrets) == []


# ----------------------------------------------------------------------------- the index


def _index_leaks(vault: Path, secrets: list[str]) -> list[str]:
    """Runs of 10+ letters/digits of each secret, as typed and lower-cased (what the
    analyzer indexes), found in any file under `.index/`."""
    import re

    blobs = {p.name: p.read_bytes() for p in (vault / ".index").rglob("*") if p.is_file()}
    found = []
    for secret in secrets:
        for run in re.findall(r"[A-Za-z0-9]{10,}", secret):
            for needle in {run, run.lower()}:
                found += [f"{name}: {needle}" for name, data in blobs.items()
                          if needle.encode() in data]
    return found


def test_a_secret_typed_into_a_note_never_reaches_the_index(repo: Path,
                                                           env: dict[str, str]) -> None:
    """Edited in by hand (no redaction on the way in), indexed by the next command and by a
    full rebuild, edited out again, and a note deleted: `.index/` never holds it."""
    gh, dop = _secret("github_token"), _secret("digitalocean_pat")
    vault = repo / ".openCodeMemory"
    # The notes written in process (`ocm remember` itself is tested above); every step that
    # touches the secret below is a fresh `ocm` process.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OCM_HOME", env["OCM_HOME"])
        project = Project.open(cwd=repo)
        for i in range(30):
            project.remember(f"Fact number {i} about the payment queue", "gotcha")
    notes = sorted((vault / "memories" / "gotcha").glob("*.md"))
    assert len(notes) == 30
    typed, doomed = notes[0], notes[1]
    original = typed.read_text()
    typed.write_text(original.replace("Fact number 0", f"Fact number 0, CI uses {gh} and zebra"))
    doomed.write_text(doomed.read_text() + f"\nops token {dop} for zebra\n")
    hits = json.loads(h.ocm_here(["search", "zebra", "--json"], env, repo).stdout)
    assert len(hits) == 2  # indexed, findable by its other words
    assert _index_leaks(vault, [gh, dop]) == []
    assert h.ocm_here(["rebuild-index"], env, repo).returncode == 0
    assert _index_leaks(vault, [gh, dop]) == []
    assert gh in typed.read_text()  # the person's file is never rewritten by a read
    typed.write_text(original)
    memory_id = doomed.stem
    assert h.ocm_here(["forget", memory_id, "--delete"], env, repo).returncode == 0
    assert json.loads(h.ocm_here(["search", "zebra", "--json"], env, repo).stdout) == []
    assert _index_leaks(vault, [gh, dop]) == []


@pytest.mark.parametrize("unit", [
    "curl -u ", "curl -H ", "heroku=", "okta", "PuTTY-User-Key-File-2:", "machine x password ",
    "mysql -p", "--password ", "AccountKey=", "xoxb-", "key-", "sig=", "1234567890:AA",
    "the password is ", "-eyJ", "pass: ",
], ids=repr)
def test_keyword_dense_text_redacts_stably(unit: str) -> None:
    # Every keyword of a rule repeated back to back; bench/redaction_speed.py times these at
    # growing sizes (linear: ~2x per doubling). Here: the result is stable under a second
    # pass and every stretch between markers is the input's own text.
    text = unit * (100_000 // len(unit))
    out = redact(text)
    assert redact(out) == out
    assert all(piece in text for piece in re.split(r"\[REDACTED:[a-z0-9_]+\]", out))
