"""`ocm init [--agents ...]`, `ocm uninstall`, `ocm doctor`, `ocm hook`: thin click commands
over `ocm.agents.wiring` and `ocm.hook`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ocm.vault.errors import OcmError
from ocm.vault.paths import VAULT_DIRNAME

from . import render

_VAULT = click.option(
    "--vault", "vault", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Vault folder (default: <project root>/.openCodeMemory, or $OCM_VAULT).")
_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")
_AGENTS_HELP = ("Hosts to wire: claude-code,cursor,codex,gemini,vscode,opencode,windsurf,"
                "copilot,qwen,droid,kilo,antigravity, 'all' or 'none' "
                "(default: the ones installed on this machine).")


def _interactive() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _hosts(agents: str | None, home: Path, yes: bool, verb: str) -> list[str]:
    from ocm.agents import wiring

    try:
        hosts = wiring.parse_agents(agents)
    except ValueError as exc:
        raise OcmError(str(exc)) from None
    if hosts is None:
        hosts = wiring.detect(home)
        if hosts and not yes and _interactive() and not click.confirm(
                f"{verb} {', '.join(hosts)}?", default=True):
            return []
    return hosts


def _reports_json(reports: list[Any]) -> list[dict[str, Any]]:
    return [{"host": r.host, "todo": r.todo,
             "files": [{"path": str(o.path), "what": o.what, "action": o.action,
                        "detail": o.detail} for o in r.outcomes]} for r in reports]


def _shown(path: Path, root: Path) -> str:
    for base, prefix in ((root, ""), (Path.home(), "~/")):
        try:
            return prefix + path.relative_to(base).as_posix()
        except ValueError:
            continue
    return str(path)


def _reports_table(reports: list[Any], title: str, show_todo: bool, root: Path) -> None:
    from rich.table import Table

    out = render.console()
    if not reports:
        out.print("No agents wired (none named, none detected). Use --agents NAME[,NAME].")
        return
    table = Table(title=title, expand=False, pad_edge=False, show_lines=True)
    table.add_column("host", no_wrap=True)
    table.add_column("file", overflow="fold")
    table.add_column("what", no_wrap=True)
    table.add_column("result", overflow="fold")
    if show_todo:
        table.add_column("you still need to", overflow="fold")
    for report in reports:
        for i, o in enumerate(report.outcomes):
            row = [report.host if i == 0 else "", _shown(o.path, root), o.what,
                   o.action + (f": {o.detail}" if o.detail else "")]
            if show_todo:
                row.append("\n".join(f"• {t}" for t in report.todo) if i == 0 else "")
            table.add_row(*row)
    out.print(table)


@click.command()
@_VAULT
@_JSON
@click.option("--agents", help=_AGENTS_HELP)
@click.option("--user", is_flag=True, help="Wire the hosts' user-level configs (all projects).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask (never asked without a terminal).")
@click.option("--team", is_flag=True,
              help="Share the vault with your team through git (see `ocm team on`).")
@click.option("--sessions", is_flag=True, help="With --team: share session notes too.")
def init(vault: Path | None, as_json: bool, agents: str | None, user: bool, yes: bool,
         team: bool, sessions: bool) -> None:
    """Create the project's vault, ignore it in git (or share it: --team), register it, and
    wire agent hosts."""
    from ocm.agents import wiring
    from ocm.agents.base import executables
    from ocm.project import Project
    from ocm.vault.paths import user_home

    if sessions and not team:
        raise OcmError("--sessions goes with --team (it shares session notes)")
    project = Project.open(vault=vault)
    info = project.init(team=team, share_sessions=sessions, ocm_command=executables()[1])
    ctx = wiring.context(project.root, user)
    hosts = _hosts(agents, ctx.home, yes, "Wire")
    reports = wiring.wire(hosts, ctx, wiring.manifest_path(project.vault.root, user_home(),
                                                           user))
    if as_json:
        render.emit_json({**info, "agents": _reports_json(reports)})
        return
    render.kv_table([
        ("project", info["project"]), ("vault", info["vault"]),
        (".gitignore", "shared with the team through git (ocm-note merge driver)"
         if info["team"] else "updated" if info["gitignore_updated"]
         else "already ignores the vault"),
        ("registry", "registered" if info["registered"] else "already registered"),
        *[("git", name) for name in (info["team"] or {}).get("changed", [])
          if "no longer tracked" in name],
        ("obsidian", f"ocm.base {info['obsidian_base']} (open the vault folder in Obsidian)"),
    ], title="ocm init")
    _reports_table(reports, "Agent wiring" + (" (user level)" if user else ""), True,
                   project.root)


@click.command()
@_VAULT
@_JSON
@click.option("--agents", default="all", show_default=True, help="Hosts to unwire.")
@click.option("--user", is_flag=True, help="Unwire the hosts' user-level configs.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask (never asked without a terminal).")
def uninstall(vault: Path | None, as_json: bool, agents: str, user: bool, yes: bool) -> None:
    """Remove exactly what `ocm init` added to agent configs (the notes stay)."""
    from ocm.agents import wiring
    from ocm.project import Project
    from ocm.vault.paths import user_home

    project = Project.open(vault=vault)
    ctx = wiring.context(project.root, user)
    try:
        hosts = wiring.parse_agents(agents) or []
    except ValueError as exc:
        raise OcmError(str(exc)) from None
    if hosts and not yes and _interactive() and not click.confirm(
            f"Remove ocm from {', '.join(hosts)} configs?", default=True):
        return
    reports = wiring.unwire(hosts, ctx, wiring.manifest_path(project.vault.root, user_home(),
                                                             user))
    kept = {"vault": str(project.vault.root),
            "gitignore": str(project.root / ".gitignore") if _ignores_vault(project) else None}
    if as_json:
        render.emit_json({"agents": _reports_json(reports), "vault_kept": kept["vault"],
                          "kept": kept})
        return
    _reports_table(reports, "ocm uninstall", False, project.root)
    click.echo(f"Kept your notes in {project.vault.root}: they are yours, not configuration "
               "(delete the folder to drop them).")
    if kept["gitignore"]:
        click.echo(f"Kept the {VAULT_DIRNAME}/ line in {kept['gitignore']}: it keeps the notes "
                   "out of git while the folder exists (remove it after deleting the folder).")


def _ignores_vault(project: Any) -> bool:
    gitignore = project.root / ".gitignore"
    try:
        lines = gitignore.read_text(encoding="utf-8").splitlines()
    except (FileNotFoundError, UnicodeDecodeError):
        return False
    return any(line.strip().strip("/") == VAULT_DIRNAME for line in lines)


@click.command()
@_VAULT
@_JSON
def doctor(vault: Path | None, as_json: bool) -> None:
    """Check the vault, the index, broken notes and each host's wiring; say how to fix."""
    from rich.table import Table

    from ocm.agents import wiring
    from ocm.project import Project

    project = Project.open(vault=vault)
    checks = wiring.doctor(project, wiring.context(project.root, False),
                           wiring.context(project.root, True))
    if as_json:
        render.emit_json([c.__dict__ for c in checks])
    else:
        style = {"ok": "green", "warn": "yellow", "fail": "red", "info": "dim"}
        table = Table(title="ocm doctor", expand=False, pad_edge=False)
        for name in ("check", "status", "detail", "how to fix"):
            table.add_column(name, overflow="fold")
        for c in checks:
            table.add_row(c.what, f"[{style[c.status]}]{c.status}[/]", c.detail, c.fix)
        render.console().print(table)
    if any(c.status == "fail" for c in checks):
        sys.exit(1)


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                 "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def hook(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Agent hook entry point: `ocm hook HOST [EVENT]` with the payload on stdin.

    Prints only what the host accepts and always exits 0 (installed hooks call the faster
    `ocm-hook` script, which is the same code without the CLI)."""
    if args[:1] in (("--help",), ("-h",)):  # a person asking, not a host calling
        click.echo(ctx.get_help())
        return
    from ocm.hook import run

    out = run(list(args))
    if out:
        sys.stdout.write(out + "\n")
    sys.stdout.flush()


def register(cli: click.Group) -> None:
    for command in (init, uninstall, doctor, hook):
        cli.add_command(command)
