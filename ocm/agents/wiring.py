"""`ocm init --agents`, `ocm uninstall`, `ocm doctor`: wiring hosts in and out, checking it.

Thin over `installer` (how a file is edited) and the host modules (what goes where).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import installer
from .base import InstallContext, stable_executables
from .common import HOSTS, canonical_host, host_module

MANIFEST_NAME = ".install-manifest.json"  # dot file: invisible to Obsidian


@dataclass
class HostReport:
    host: str
    outcomes: list[installer.Outcome] = field(default_factory=list)
    todo: list[str] = field(default_factory=list)


def parse_agents(value: str | None) -> list[str] | None:
    """`claude-code,cursor` / `all` / `none` -> hosts; None means "detect"."""
    if value is None:
        return None
    words = [w.strip() for w in value.replace(" ", ",").split(",") if w.strip()]
    if not words or words == ["none"]:
        return []
    if "all" in words:
        return list(HOSTS)
    hosts = []
    for word in words:
        host = canonical_host(word)
        if host is None:
            raise ValueError(f"unknown agent {word!r}: expected {', '.join(HOSTS)}, all or none")
        if host not in hosts:
            hosts.append(host)
    return hosts


def detect(home: Path) -> list[str]:
    return [h for h in HOSTS if host_module(h).detected(home)]


def context(root: Path, user: bool, home: Path | None = None) -> InstallContext:
    hook, ocm = stable_executables()
    home = home or Path(os.path.expanduser("~"))
    return InstallContext(root=home if user else root, user=user, hook_exe=hook, ocm_exe=ocm,
                          home=home)


def manifest_path(vault_dir: Path, user_home: Path, user: bool) -> Path:
    return (user_home if user else vault_dir) / MANIFEST_NAME


def wire(hosts: list[str], ctx: InstallContext, manifest_file: Path) -> list[HostReport]:
    manifest = installer.load_manifest(manifest_file)
    reports = []
    for host in hosts:
        steps, todo = host_module(host).plan(ctx)
        report = HostReport(host, todo=todo)
        for step in steps:
            report.outcomes.append(installer.apply(step, manifest))
        manifest.setdefault("hosts", [])
        if host not in manifest["hosts"]:
            manifest["hosts"].append(host)
        reports.append(report)
    installer.save_manifest(manifest_file, manifest)
    return reports


def unwire(hosts: list[str], ctx: InstallContext, manifest_file: Path) -> list[HostReport]:
    manifest = installer.load_manifest(manifest_file)
    reports = []
    done: set[str] = set()
    # A rule file shared with a host that stays wired (AGENTS.md: Codex and VS Code) stays.
    staying = [h for h in manifest.get("hosts", []) if h not in hosts and h in HOSTS]
    for other in staying:
        done |= {f"{step.path}|{type(step).__name__}"
                 for step in host_module(other).plan(ctx)[0]}
    for host in hosts:
        steps, _ = host_module(host).plan(ctx)
        report = HostReport(host)
        for step in steps:
            key = f"{step.path}|{type(step).__name__}"
            if key in done:  # AGENTS.md is shared by Codex and VS Code
                continue
            done.add(key)
            report.outcomes.append(installer.remove(step, manifest))
        reports.append(report)
        if host in manifest.get("hosts", []):
            manifest["hosts"].remove(host)
    if not manifest.get("hosts"):
        manifest["files"] = {}
    installer.save_manifest(manifest_file, manifest)
    return reports


@dataclass
class Check:
    what: str
    status: str    # ok | warn | fail | info
    detail: str = ""
    fix: str = ""


def _command_exe(command: str) -> str | None:
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return words[0] if words else None


def doctor(project: Any, ctx: InstallContext, user_ctx: InstallContext) -> list[Check]:
    from ocm.vault.freshness import journal

    checks: list[Check] = []
    vault = project.vault
    if not vault.root.is_dir():
        checks.append(Check("vault", "fail", f"{vault.root} does not exist",
                            "run `ocm init` in the project root"))
        return checks
    checks.append(Check("vault", "ok", str(vault.root)))
    from ocm.vault.team import mode as team_mode

    if team_mode.is_team(vault.root):
        registered = team_mode.driver_registered(project.root)
        checks.append(Check("team memory", "ok" if registered else "warn",
                            "shared through git" + ("" if registered else
                                                    "; the ocm-note merge driver is not "
                                                    "registered in this clone"),
                            "" if registered else "ocm init"))
    from ocm.vault.boundary import links_in

    links = links_in(vault.root)
    if links:
        more = f" (+{len(links) - 10} more)" if len(links) > 10 else ""
        checks.append(Check("symbolic links", "warn",
                            f"never read or written: {', '.join(links[:10])}{more}",
                            "replace each link with the file itself, or delete it"))
    if journal.pending(vault.root):
        checks.append(Check("hook journal", "info", "hook records wait to be folded",
                            "any `ocm search` folds them"))
    failed = Path(journal.hooks_dir(vault.root)) / journal.FAILED
    if failed.is_file() and failed.stat().st_size:
        checks.append(Check("hook journal", "warn", f"records that could not be applied: "
                            f"{failed}", "see .hooks/hook.log; fix the note, then delete it"))
    log = Path(journal.hooks_dir(vault.root)) / journal.LOG
    if log.is_file():
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        bad = [ln for ln in lines[-200:] if "Error" in ln or "failed" in ln]
        if bad:
            checks.append(Check("hook log", "warn", bad[-1][:200], f"full log: {log}"))
    try:
        status = project.status()
        broken = status.get("broken_notes") or {}
        checks.append(Check("index", "ok" if not broken else "warn",
                            f"{status['sessions']} sessions, {status['memories']} memories",
                            ""))
        for rel, problem in broken.items():
            checks.append(Check(f"note {rel}", "fail", problem,
                                "fix the frontmatter by hand (YAML between --- lines)"))
        for rel in status.get("conflicted_notes") or []:
            checks.append(Check(f"note {rel}", "fail", "unmerged git conflict (both sides are "
                                "in the file)", f"ocm team resolve {vault.root.name}/{rel}"))
        for note_id, rels in (status.get("duplicate_ids") or {}).items():
            checks.append(Check(f"id {note_id}", "warn",
                                f"held by {len(rels)} files; ocm reads {rels[0]} and "
                                f"ignores {', '.join(rels[1:])}",
                                "delete the extra copies, or give each its own `id:`"))
    except Exception as exc:  # noqa: BLE001 - doctor reports, it does not crash
        checks.append(Check("index", "fail", f"{type(exc).__name__}: {exc}",
                            "run `ocm rebuild-index`"))
    semantic = project.semantic_status()
    if semantic["available"]:
        checks.append(Check("semantic search", "ok", f"on: {semantic['model']} (offline; "
                            f"{semantic['switch']})", "OCM_SEMANTIC=0 or "
                            '{"semantic": false} in config.json: keywords only'))
    elif semantic["enabled"]:
        checks.append(Check("semantic search", "warn", f"model could not load: "
                            f"{semantic['detail']}; searching by keywords only",
                            "reinstall ocm (pip install opencodememory)"))
    else:
        checks.append(Check("semantic search", "info", f"off, keywords only: "
                            f"{semantic['detail']}", "OCM_SEMANTIC=1 fuses meaning with words"))
    from .nudge import settings as nudges

    checks.append(Check("nudges", "info", *nudges.describe(str(vault.root), dict(os.environ))))
    import shutil

    hook_word = ctx.hook_exe.split(" ")[0]
    hook_path = hook_word if os.path.isabs(hook_word) else shutil.which(hook_word)
    hook_ok = bool(hook_path) and os.access(str(hook_path), os.X_OK)
    checks.append(Check("ocm-hook", "ok" if hook_ok else "fail",
                        ctx.hook_exe if hook_path == hook_word else f"{hook_word} ({hook_path})",
                        "" if hook_ok else "reinstall ocm (pip install opencodememory)"))
    for host in HOSTS:
        for scope, c in (("project", ctx), ("user", user_ctx)):
            steps, todo = host_module(host).plan(c)
            states = [(step, *installer.check(step)) for step in steps]
            wired = [s for s in states if s[1]]
            if not wired:
                if scope == "project":
                    checks.append(Check(f"{host}", "info", "not wired in this project",
                                        f"ocm init --agents {host}"))
                continue
            missing = [f"{s[0].what} ({s[0].path.name}: {s[2]})" for s in states if not s[1]]
            stale = _stale_commands(steps)
            status_word = "warn" if missing or stale else "ok"
            detail = "; ".join(missing + stale) or ", ".join(s[0].what for s in wired)
            checks.append(Check(f"{host} ({scope})", status_word, detail,
                                f"ocm init --agents {host}{' --user' if scope == 'user' else ''}"
                                if status_word != "ok" else "; ".join(todo)))
            if (scope == "project" and not missing and not stale
                    and host_module(host).EVENTS and _never_fired(project, host)):
                checks.append(Check(f"{host} hooks", "warn", "wired, but no hook of it has "
                                    "fired in this project yet (no session of it, nothing in "
                                    "the hook log)", "; ".join(todo)))
    return checks


# A command string (JSON, TOML), or the first word of a command list (OpenCode's and Kilo's
# `"command": [...]`, their plugin's `const HOOK = [...]`).
_COMMAND_LINE = re.compile(
    r'"(?:command|bash)"\s*:\s*"((?:[^"\\]|\\.)*)"|^command\s*=\s*"([^"]*)"'
    r'|(?:"command"\s*:|^const HOOK =)\s*\[\s*"((?:[^"\\]|\\.)*)"', re.M)


def _stale_commands(steps: list[installer.Step]) -> list[str]:
    """The ocm commands a host's config runs that no longer exist: an absolute path that is
    gone (a moved or deleted clone), or a bare name the PATH does not find."""
    import shutil

    out = []
    for step in steps:
        text = installer._read(step.path) or ""
        for match in _COMMAND_LINE.finditer(text):
            listed = match.group(3)
            exe = shlex.quote(listed) if listed else match.group(1) or match.group(2) or ""
            exe = _command_exe(exe)
            if not exe or os.path.basename(exe).split(".")[0] not in ("ocm-hook", "ocm"):
                continue
            if os.path.isabs(exe) and not os.access(exe, os.X_OK):
                out.append(f"{step.path.name} runs {exe}, which no longer exists")
            elif not os.path.isabs(exe) and not shutil.which(exe):
                out.append(f"{step.path.name} runs `{exe}`, which is not on PATH")
    return list(dict.fromkeys(out))


def _never_fired(project: Any, host: str) -> bool:
    """Wired, but no hook of the host has reached this vault: no session note of it and
    no line of it in the hook log."""
    from ocm.vault.freshness import journal

    if any(data.get("tool") == host for _, data in project.vault.session_headers()):
        return False
    log = Path(journal.hooks_dir(project.vault.root)) / journal.LOG
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    return not re.search(rf"(^|\s){re.escape(host)}\s", text, re.M)
