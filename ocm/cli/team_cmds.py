"""`ocm team on|off|status|resolve` and `ocm merge-note` (git's merge driver): thin click
commands over `ocm.vault.team.mode` and `ocm.vault.team.merge` (see those modules)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ocm.vault.errors import OcmError

from . import render

_VAULT = click.option(
    "--vault", "vault", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Vault folder (default: <project root>/.openCodeMemory, or $OCM_VAULT).")
_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")
SESSIONS_HELP = "Share session notes too (default: memories only)."


def _project(vault: Path | None):  # -> Project
    from ocm.project import Project

    return Project.open(vault=vault)


def ocm_command() -> str:
    """This install's `ocm`, absolute, for the merge driver git runs."""
    from ocm.agents.base import executables

    return executables()[1]


def _show(info: dict, as_json: bool) -> None:
    if as_json:
        render.emit_json(info)
        return
    for name in info.get("changed") or []:
        click.echo(f"updated {name}")
    if info.get("driver_registered"):
        click.echo("registered the ocm-note merge driver in .git/config")
    if info.get("hint"):
        click.echo(info["hint"])


@click.group()
def team() -> None:
    """Share this project's memory with your team through git."""


@team.command("on")
@_VAULT
@_JSON
@click.option("--sessions", is_flag=True, help=SESSIONS_HELP)
def team_on(vault: Path | None, as_json: bool, sessions: bool) -> None:
    """Track the vault in git (memories; sessions with --sessions) and merge notes with ocm."""
    project = _project(vault)
    info = project.team_on(share_sessions=sessions, ocm_command=ocm_command())
    _show(info, as_json)
    if not as_json:
        click.echo(f"Team memory on. Commit it: git add {project.vault.root.name} .gitignore "
                   "&& git commit -m 'Share ocm memory'")


@team.command("off")
@_VAULT
@_JSON
def team_off(vault: Path | None, as_json: bool) -> None:
    """Ignore the vault in git again (the notes stay on disk)."""
    info = _project(vault).team_off()
    _show(info, as_json)
    if not as_json:
        click.echo("Team memory off.")


@team.command("resolve")
@_VAULT
@_JSON
@click.argument("paths", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
def team_resolve(vault: Path | None, as_json: bool, paths: tuple[Path, ...]) -> None:
    """Merge notes left with git conflict markers (default: every such note), keeping both
    sides; a note that cannot be merged by fields is named and left as it is."""
    rows = _project(vault).resolve_conflicts(list(paths))
    if as_json:
        render.emit_json(rows)
    elif not rows:
        click.echo("No notes with conflict markers.")
    for row in [] if as_json else rows:
        if row["merged"]:
            click.echo(f"merged {row['path']}")
        else:
            click.echo(f"still conflicted {row['path']}: {row['problem']} (edit it by hand)")
    if any(not row["merged"] for row in rows):
        sys.exit(1)


@click.command("merge-note", hidden=True)
@click.argument("base", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("name", required=False)
def merge_note(base: Path, ours: Path, theirs: Path, name: str | None) -> None:
    """git's merge driver for notes: `ocm merge-note %O %A %B %P`; writes the result over
    OURS and exits 0, or 1 with conflict markers left for a person."""
    from ocm.vault.atomic import atomic_write_text
    from ocm.vault.team.merge import merge_note as merge

    try:
        texts = [p.read_bytes().decode("utf-8") for p in (base, ours, theirs)]
    except (OSError, UnicodeDecodeError) as exc:
        raise OcmError(f"cannot merge {name or ours}: {exc}") from None
    result = merge(*texts)
    atomic_write_text(ours, result.text)
    if not result.clean:
        click.echo(f"ocm merge-note: {name or ours}: {'; '.join(result.conflicts)}; "
                   "fix the YAML, then run `ocm team resolve`", err=True)
        sys.exit(1)


def register(cli: click.Group) -> None:
    cli.add_command(team)
    cli.add_command(merge_note)
