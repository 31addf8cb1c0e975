"""`ocm stale`, `ocm projects`, `ocm import`, `ocm export`, `ocm supersede`: thin click
commands over `ocm.project.Project` and the vault helpers."""

from __future__ import annotations

from pathlib import Path

import click

from . import render

_VAULT = click.option(
    "--vault", "vault", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Vault folder (default: <project root>/.openCodeMemory, or $OCM_VAULT).")
_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")


def _project(vault: Path | None):  # -> Project
    from ocm.project import Project

    return Project.open(vault=vault, strict=True)


@click.command()
@_VAULT
@_JSON
@click.option("--scope", type=click.Choice(["project", "global"]), default="project",
              show_default=True)
def stale(vault: Path | None, as_json: bool, scope: str) -> None:
    """Active memories whose files changed in git since they were written (verify them)."""
    rows = _project(vault).stale_memories(scope)
    if as_json:
        render.emit_json(rows)
        return
    if not rows:
        click.echo("No stale memories: no file a memory is about changed since it was written.")
        return
    for row in rows:
        label = f"[{row['project']}] " if scope == "global" else ""
        click.echo(f"{label}{row['id']} ({row['type']}, {row['git_sha'][:8]}): {row['title']}")
        click.echo(f"    verify: {', '.join(row['changed_files'])} changed since this was written")
        click.echo(f"    {row['markdown_path']}")


@click.command()
@_VAULT
@_JSON
@click.option("--prune", is_flag=True, help="Drop entries whose vault is gone or repeated.")
@click.option("--dry-run", is_flag=True, help="With --prune: say what would be dropped.")
def projects(vault: Path | None, as_json: bool, prune: bool, dry_run: bool) -> None:
    """Registered project vaults (what `--scope global` searches); prune missing ones."""
    info = _project(vault).projects(prune=prune or dry_run, dry_run=dry_run)
    if as_json:
        render.emit_json(info)
        return
    from rich.table import Table

    rows = info["projects"]
    if not rows:
        click.echo("No registered projects (run `ocm init` in a project).")
    else:
        table = Table(title="Registered projects", expand=False, pad_edge=False)
        for name in ("", "project", "sessions", "memories", "vault", "problem"):
            table.add_column(name, overflow="fold")
        for row in rows:
            table.add_row("*" if row["current"] else "", row["project"], str(row["sessions"]),
                          str(row["memories"]), row["vault"], row["problem"] or "")
        render.console().print(table)
        for row in rows:  # whole lines: a table cell folds a long path
            click.echo(f"{row['project']}  {row['vault']}")
    verb = "Would remove" if dry_run else "Removed"
    for row in info["removed"]:
        click.echo(f"{verb} {row['project']} ({row['vault']}): {row['problem']}")
    if (prune or dry_run) and not info["removed"]:
        click.echo("Nothing to prune.")


@click.command()
@_VAULT
@click.argument("note_id", required=False)
@click.option("--format", "fmt", type=click.Choice(["path", "json"]), default=None,
              help="path: a note's Markdown path (with NOTE_ID); json: the whole vault.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the JSON backup to this file instead of stdout.")
@click.option("--scope", type=click.Choice(["project", "user"]), default="project",
              show_default=True)
def export(vault: Path | None, note_id: str | None, fmt: str | None, output: Path | None,
           scope: str) -> None:
    """Print a note's Markdown path (`ocm export ID`), or back up the whole vault as JSON
    (`ocm export --format json [-o FILE]`; restore with `ocm import FILE`)."""
    from ocm.vault.errors import OcmError

    fmt = fmt or ("path" if note_id else "json")
    if fmt == "path":
        if not note_id:
            raise OcmError("give a NOTE_ID to print its path, or use --format json")
        click.echo(_project(vault).get(note_id)["markdown_path"])
        return
    if note_id:
        raise OcmError("--format json exports the whole vault: drop the NOTE_ID")
    import json

    from ocm.vault.atomic import atomic_write_text

    data = _project(vault).export_vault(scope)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        click.echo(text, nl=False)
        return
    atomic_write_text(output.resolve(), text)
    click.echo(f"Exported {data['counts']['session']} sessions and "
               f"{data['counts']['memory']} memories to {output.resolve()}", err=True)


@click.command("import")
@_VAULT
@_JSON
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--format", "fmt", default="auto", show_default=True,
              type=click.Choice(["auto", "mcp-memory", "basic-memory", "claude", "ocm"]),
              help="mcp-memory: the MCP memory server's JSONL; basic-memory: its notes folder; "
                   "claude: CLAUDE.md or an auto-memory folder; ocm: an `ocm export` file.")
@click.option("--dry-run", is_flag=True, help="Print the plan and the counts; write nothing.")
@click.option("--scope", type=click.Choice(["project", "user"]), default="project",
              show_default=True)
@click.option("--keep-duplicates", is_flag=True,
              help="Import records that nearly copy an active record of their type too "
                   "(exact copies are always skipped).")
def import_(vault: Path | None, as_json: bool, source: Path, fmt: str, dry_run: bool,
            scope: str, keep_duplicates: bool) -> None:
    """Import memories from another tool (typed records, redacted) or restore a backup."""
    report = _project(vault).import_notes(source, fmt=fmt, dry_run=dry_run, scope=scope,
                                          keep_duplicates=keep_duplicates)
    if as_json:
        render.emit_json(report)
        return
    for item in report["items"]:
        what = item.get("path") or f"{item['type']:<11} {item['title']}"
        click.echo(f"{item['action']:<8} {what}"[:160])
    verb = "Would write" if dry_run else "Wrote"
    counts = ", ".join(f"{n} {t}" for t, n in sorted(report["by_type"].items())) or "nothing"
    near = report.get("near_copies")  # an `ocm export` restore has none
    skipped = f"{report['skipped']} already there" + (
        f", {near} near-copies skipped" if near else "")
    click.echo(f"{verb} {counts} from {report['format']} ({skipped}).")


@click.command("supersede")
@_VAULT
@_JSON
@click.option("--dry-run", is_flag=True, help="Show what would be superseded; change nothing.")
@click.option("--scope", type=click.Choice(["project", "user"]), default="project",
              show_default=True)
def supersede_(vault: Path | None, as_json: bool, dry_run: bool, scope: str) -> None:
    """Auto-supersede over stored memories: an older active record that a newer one of the
    same type restates (similarity above the tuned thresholds) is marked superseded."""
    rows = _project(vault).supersede_scan(dry_run=dry_run, scope=scope)
    if as_json:
        render.emit_json(rows)
        return
    if not rows:
        click.echo("Nothing to supersede: no active record of a type is restated by a newer "
                   "one, or reported done by it.")
        return
    verb = "would be superseded" if dry_run else "superseded"
    for row in rows:
        status = row.get("error") or verb
        click.echo(f"{row['type']}: {row['old_id']} {status} by {row['new_id']} ({row['why']})")
        click.echo(f"    old: {row['old_title']}\n    new: {row['new_title']}")


def register(cli: click.Group) -> None:
    for command in (stale, projects, export, import_, supersede_):
        cli.add_command(command)
