"""The real host programs under test: pinned npm versions, where `tests_e2e/run.py` installs
them, and how each is pointed at the mock model (endpoint, dummy key, trust) and run
non-interactively in a throwaway project."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(os.environ.get("OCM_E2E_CACHE") or Path.home() / ".cache" / "ocm-e2e")
DUMMY_KEY = "e2e-dummy-key"
PROMPT = "E2E task: create src/greet.py, run it, fix it, remember the gotcha"


@dataclass(frozen=True)
class Host:
    name: str  # ocm's host name (`ocm init --agents NAME`)
    package: str
    version: str
    binary: str

    @property
    def prefix(self) -> Path:
        return CACHE / f"{self.package.replace('/', '+')}@{self.version}"

    @property
    def exe(self) -> Path:
        return self.prefix / "node_modules" / ".bin" / self.binary

    def installed_version(self) -> str | None:
        manifest = self.prefix / "node_modules" / self.package / "package.json"
        try:
            return json.loads(manifest.read_text())["version"]
        except (OSError, ValueError, KeyError):
            return None


PINNED = {
    h.name: h for h in (
        Host("claude-code", "@anthropic-ai/claude-code", "2.1.197", "claude"),
        Host("codex", "@openai/codex", "0.169.0", "codex"),
        Host("gemini", "@google/gemini-cli", "0.61.0", "gemini"),
        Host("opencode", "opencode-ai", "1.18.33", "opencode"),
        Host("copilot", "@github/copilot", "1.0.102", "copilot"),
        Host("qwen", "@qwen-code/qwen-code", "0.24.4", "qwen"),
        Host("droid", "droid", "0.215.0", "droid"),
        Host("kilo", "@kilocode/cli", "7.7.7", "kilo"),
    )
}
# `make e2e HOSTS=...` (tests_e2e/run.py) hands the chosen set to the tests in this variable:
# `name@version` words; unset means every host at its pinned version.
CHOSEN = "OCM_E2E_CHOSEN"


def chosen(value: str | None) -> dict[str, Host]:
    """The hosts to run: `claude-code@2.1.332,codex@0.171.0` (from `run.py`), or all pinned."""
    if not value:
        return dict(PINNED)
    out = {}
    for word in value.split(","):
        name, _, version = word.strip().partition("@")
        base = PINNED[name]
        out[name] = Host(name, base.package, version or base.version, base.binary)
    return out


HOSTS = chosen(os.environ.get(CHOSEN))


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def claude_code(host: Host, root: Path, home: Path, url: str) -> tuple[list[str], dict]:
    # The throwaway HOME's user settings approve the project's .mcp.json server; the
    # workspace trust dialog is not shown in -p mode.
    _write_json(home / ".claude" / "settings.json", {"enableAllProjectMcpServers": True})
    # MCP_TIMEOUT: on a loaded machine `ocm mcp` may take longer to start than Claude Code's
    # default 30 s, and the server is then dropped for the whole session.
    env = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": DUMMY_KEY,
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
           "MCP_TIMEOUT": "120000"}
    argv = [str(host.exe), "-p", PROMPT, "--model", "claude-sonnet-4-5",
            "--allowedTools", "Write", "Edit", "Bash", "mcp__ocm__ocm__remember",
            "mcp__ocm__ocm__checkpoint"]
    return argv, env


def codex(host: Host, root: Path, home: Path, url: str) -> tuple[list[str], dict]:
    # A provider of our own at the mock; the project trusted (Codex reads .codex/ only in
    # trusted projects). The hooks' trust is what a person gives in /hooks: here the
    # invocation's own flag stands in for it.
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    (home / ".codex" / "config.toml").write_text(
        'model = "gpt-5.5"\nmodel_provider = "mock"\n\n'
        f'[model_providers.mock]\nname = "mock"\nbase_url = "{url}/v1"\n'
        'env_key = "OCM_E2E_MODEL_KEY"\nwire_api = "responses"\n\n'
        f'[projects."{root}"]\ntrust_level = "trusted"\n')
    argv = [str(host.exe), "exec", "--dangerously-bypass-approvals-and-sandbox",
            "--dangerously-bypass-hook-trust", "--skip-git-repo-check", PROMPT]
    return argv, {"OCM_E2E_MODEL_KEY": DUMMY_KEY}


def gemini(host: Host, root: Path, home: Path, url: str) -> tuple[list[str], dict]:
    # API-key auth against the mock; the workspace trusted as a person would trust it.
    _write_json(home / ".gemini" / "settings.json", {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}})
    _write_json(home / ".gemini" / "trustedFolders.json", {str(root): "TRUST_FOLDER"})
    env = {"GEMINI_API_KEY": DUMMY_KEY, "GOOGLE_GEMINI_BASE_URL": url}
    return [str(host.exe), "-p", PROMPT, "--yolo"], env


def opencode(host: Host, root: Path, home: Path, url: str) -> tuple[list[str], dict]:
    # The bundled Anthropic provider with its base URL at the mock (user config, so the
    # project's opencode.json stays what `ocm init` wrote); no models.dev fetch, no updates.
    _write_json(home / ".config" / "opencode" / "opencode.json", {
        "provider": {"anthropic": {"options": {"baseURL": f"{url}/v1", "apiKey": DUMMY_KEY}}},
        "model": "anthropic/claude-sonnet-4-5", "small_model": "anthropic/claude-sonnet-4-5",
        "autoupdate": False, "share": "disabled",
        "permission": {"edit": "allow", "bash": "allow", "external_directory": "allow"}})
    # `opencode run` takes its project folder from $PWD, not from the process's working
    # directory: without it, it runs in the caller's folder (no plugin, MCP or hooks).
    env = {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
           "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_SHARE": "1",
           "PWD": str(root)}
    # `opencode run` joins its words with spaces and wraps each word that holds a space in
    # double quotes (the model and the plugin see `"fix it"` for `run "fix it"`): the
    # prompt goes as separate words, as a person typing it unquoted would give it.
    return [str(host.exe), "run", *PROMPT.split(" ")], env


def copilot(host: Host, root: Path, home: Path, url: str) -> tuple[list[str], dict]:
    # Its own provider (BYOK) at the mock, offline (no GitHub sign-in, no updates);
    # COPILOT_ALLOW_ALL=true approves the tools and trusts the folder (its MCP servers and
    # hooks), as a person answering Copilot's questions would.
    # Copilot's `create` tool does not make parent folders (the others' write tools do).
    (root / "src").mkdir(exist_ok=True)
    env = {"COPILOT_PROVIDER_BASE_URL": url, "COPILOT_PROVIDER_TYPE": "anthropic",
           "COPILOT_PROVIDER_API_KEY": DUMMY_KEY, "COPILOT_OFFLINE": "true",
           "COPILOT_MODEL": "claude-sonnet-4.5", "COPILOT_ALLOW_ALL": "true",
           "COPILOT_AUTO_UPDATE": "false"}
    return [str(host.exe), "-p", PROMPT, "--allow-all-tools"], env


def qwen(host: Host, root: Path, home: Path, url: str) -> tuple[list[str], dict]:
    # Qwen Code's Gemini protocol at the mock (its `write_file` and `run_shell_command` are
    # Gemini CLI's); --yolo approves the tools as a person answering its questions would.
    _write_json(home / ".qwen" / "settings.json", {
        "security": {"auth": {"selectedType": "gemini"}},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}})
    env = {"GEMINI_API_KEY": DUMMY_KEY, "GOOGLE_GEMINI_BASE_URL": url}
    return [str(host.exe), "-p", PROMPT, "--yolo", "--auth-type", "gemini",
            "--model", "gemini-2.5-pro"], env


def droid(host: Host, root: Path, home: Path, url: str) -> tuple[list[str], dict]:
    # A custom (BYOK) Anthropic-type model at the mock, named `custom:<displayName>-<index>`;
    # `--auto high` allows edits and commands as a person choosing that autonomy would.
    # droid sends its first request without waiting for MCP servers and never adds their
    # tools later in the session (README, "Factory droid"); `--add-tools MCP:ocm` makes
    # `droid exec` offer ocm's tools (`blockOnMcpLoad` alone did not).
    _write_json(home / ".factory" / "settings.json", {"customModels": [{
        "model": "claude-sonnet-4-5", "displayName": "Mock", "baseUrl": url,
        "apiKey": DUMMY_KEY, "provider": "anthropic", "maxOutputTokens": 8192}],
        "general": {"blockOnMcpLoad": True}})
    return [str(host.exe), "exec", "--auto", "high", "-m", "custom:Mock-0", "--add-tools",
            "MCP:ocm", PROMPT], {}


def kilo(host: Host, root: Path, home: Path, url: str) -> tuple[list[str], dict]:
    # OpenCode's setup under Kilo's names: its user config folder is ~/.config/kilo, its
    # variables KILO_*; no session upload, no models fetch (the namespace has no network).
    # Its own providers, codebase indexing and snapshots off: on a loaded machine they held
    # the first model call back for over 5 minutes.
    _write_json(home / ".config" / "kilo" / "kilo.json", {
        "provider": {"anthropic": {"options": {"baseURL": f"{url}/v1", "apiKey": DUMMY_KEY}}},
        "model": "anthropic/claude-sonnet-4-5", "small_model": "anthropic/claude-sonnet-4-5",
        "enabled_providers": ["anthropic"], "indexing": {"enabled": False}, "snapshot": False,
        "autoupdate": False, "share": "disabled",
        "permission": {"edit": "allow", "bash": "allow", "external_directory": "allow"}})
    env = {"KILO_DISABLE_MODELS_FETCH": "1", "KILO_DISABLE_AUTOUPDATE": "1",
           "KILO_DISABLE_LSP_DOWNLOAD": "1", "KILO_DISABLE_SHARE": "1",
           "KILO_DISABLE_SESSION_INGEST": "1", "KILO_TELEMETRY_LEVEL": "off", "PWD": str(root)}
    return [str(host.exe), "run", *PROMPT.split(" ")], env


SETUP = {"claude-code": claude_code, "codex": codex, "gemini": gemini, "opencode": opencode,
         "copilot": copilot, "qwen": qwen, "droid": droid, "kilo": kilo}
