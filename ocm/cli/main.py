"""The `ocm` command: thin click wrappers over `ocm.project.Project`."""

from __future__ import annotations

import gc
import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ocm import __version__
from ocm.vault.errors import OcmError
from ocm.vault.memories import MEMORY_TYPES

from . import agents_cmds, memory_cmds, render, searching, team_cmds, ui_cmd
from .exiting import exit_done

VAULT_OPTION = click.option(
    "--vault", "vault", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Vault folder (default: <project root>/.openCodeMemory, or $OCM_VAULT).")
MAX_BUILD_PROCS = 4
JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")


# Names the facade's errors use (the MCP tools' arguments) as the CLI spells them.
_FLAGS = {"supersede_reason": "--supersede-reason", "superseded_by": "--superseded-by"}
_ARGUMENT = re.compile(r"\b(" + "|".join(_FLAGS) + r")\b")


def _error(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


class OcmGroup(click.Group):
    """Turns every error, usage errors included, into one clear line on stderr and exit
    code 1 (click's own are three lines and exit code 2)."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
            sys.exit(0)
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx else "ocm"
            _error(f"{exc.format_message()} (see `{where} --help`)")
        except click.ClickException as exc:
            _error(exc.format_message())
        except click.Abort:
            _error("aborted")
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OcmError as exc:
            _error(_ARGUMENT.sub(lambda m: _FLAGS[m.group(1)], str(exc)))
        except OSError as exc:  # a full disk, a read-only folder: one line, not a traceback
            where = f" ({exc.filename})" if exc.filename else ""
            _error(f"{exc.strerror or exc}{where}; nothing more was written")


def _project(vault: Path | None):  # -> Project
    from ocm.project import Project

    return Project.open(vault=vault, strict=True)


def _stdin_text() -> str:
    try:
        return sys.stdin.buffer.read().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise OcmError(f"stdin is not UTF-8 text (byte {exc.start})") from None


def _read_json_input(source: str) -> dict[str, Any]:
    try:
        raw = _stdin_text() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise OcmError(f"cannot read --input {source}: {exc}") from None
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise OcmError(f"--input is not valid JSON ({exc})") from None
    except RecursionError:
        raise OcmError("--input is JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise OcmError("--input must be a JSON object with checkpoint fields")
    return data


def _split_pair(value: str, sep: str = "::") -> tuple[str, str]:
    first, _, second = value.partition(sep)
    return first.strip(), second.strip()


@click.group(cls=OcmGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ocm")
def cli() -> None:
    """openCodeMemory: local memory for AI coding assistants."""


# ----------------------------------------------------------------------------- set-up


# `ocm init [--agents ...]`, `ocm uninstall`, `ocm doctor`, `ocm hook`: see agents_cmds.
agents_cmds.register(cli)
memory_cmds.register(cli)  # stale, projects, import, export (vault / json), supersede
team_cmds.register(cli)  # team on|off|resolve, merge-note (git's merge driver)
cli.add_command(ui_cmd.ui)  # the local dashboard (ocm/ui/)


@cli.command()
@VAULT_OPTION
@JSON_OPTION
def status(vault: Path | None, as_json: bool) -> None:
    """Where the vault is, how many notes it holds, and any broken notes."""
    project = _project(vault)
    info = project.status()
    render.notices(project)
    if as_json:
        render.emit_json(info)
        return
    lists = ("broken_notes", "duplicate_ids", "conflicted_notes")
    rows = [(k, str(v)) for k, v in info.items() if k not in lists]
    rows.append(("broken notes", str(len(info["broken_notes"]))))
    rows.append(("duplicate ids", str(len(info["duplicate_ids"]))))
    render.kv_table(rows, title="ocm status")
    for rel, problem in info["broken_notes"].items():
        click.echo(f"  broken: {rel}: {problem}")
    for note_id, rels in info["duplicate_ids"].items():
        click.echo(f"  duplicate id {note_id}: reading {rels[0]}; ignoring "
                   f"{', '.join(rels[1:])} (delete it or give it its own id)")
    for rel in info["conflicted_notes"]:
        click.echo(f"  unmerged (git conflict): {rel} (ocm team resolve {rel})")


# A rebuild's progress bar is drawn at most this often: the build reports every note it
# indexes, and drawing the bar each time was ~6 % of a 10k rebuild's CPU.
DRAW_EVERY_S = 0.1


def drawn_at_most_every(seconds: float, update: Callable[[int, int, bool], None]
                        ) -> Callable[[int, int], None]:
    """A progress callback (done, total) calling `update(done, total, draw)` each time, with
    `draw` True at most once every `seconds` (always for the first report and the last,
    done == total), so the bar keeps its count and is drawn at a steady rate."""
    drawn_at: float | None = None

    def progress(done: int, total: int) -> None:
        nonlocal drawn_at
        now = time.monotonic()
        draw = drawn_at is None or now - drawn_at >= seconds or done >= total
        if draw:
            drawn_at = now
        update(done, total, draw)

    return progress


@cli.command("rebuild-index")
@VAULT_OPTION
@JSON_OPTION
@click.option("--resume", is_flag=True,
              help="Finish a build cut short (a first search's, a killed one's), or bring "
                   "the index up to date, instead of starting over.")
def rebuild_index(vault: Path | None, as_json: bool, resume: bool) -> None:
    """Rebuild the search index from the notes (it is derived; nothing is lost)."""
    from rich.progress import Progress

    project = _project(vault)
    # A full rebuild in this single-threaded process may fork sub-writers (one segment each).
    procs = max(1, min(os.cpu_count() or 1, MAX_BUILD_PROCS))
    # The collector stays off to the exit (Project.rebuild_index pauses it for the build,
    # and its first run after would traverse everything the build made), and the process
    # exits without the interpreter's teardown, as a search's does: the garbage the last
    # batch left and every module's objects go with the process, not one by one after the
    # build is done.
    collecting = gc.isenabled()
    gc.disable()
    try:
        if as_json:
            report = project.rebuild_index(procs=procs, resume=resume)
        else:
            # Drawn when the build reports, not by rich's refresh thread: a process with a
            # second thread never forks (NoteIndex.build_procs), and the build would use
            # one core.
            with Progress(transient=True, auto_refresh=False) as bar:
                task = bar.add_task("indexing notes", total=None)
                report = project.rebuild_index(
                    progress=drawn_at_most_every(DRAW_EVERY_S, lambda done, total, draw:
                                                 bar.update(task, completed=done,
                                                            total=total, refresh=draw)),
                    procs=procs, resume=resume, embedding=lambda: bar.update(
                        task, description="embedding notes", completed=0, total=None,
                        refresh=True))
        data = {"indexed": report.added + report.updated, "broken": report.broken}
        if as_json:
            render.emit_json(data)
        else:
            click.echo(f"Indexed {data['indexed']} notes; {len(report.broken)} broken.")
            for rel, problem in report.broken.items():
                click.echo(f"  broken: {rel}: {problem}")
        exit_done()
    finally:  # (an error, or `main` run in a test's process: the exit above raised)
        if collecting:
            gc.enable()


# ----------------------------------------------------------------------------- sessions


@cli.command()
@VAULT_OPTION
@JSON_OPTION
@click.option("--session", "session_id", help="ocm or host session id (default: the open one).")
@click.option("--tool", help="Tool that ran the session (for a new session).")
@click.option("--slug", help="3-4 hyphenated words naming the session.")
@click.option("--goal", help="1-2 sentences: what this session is for.")
@click.option("--done", "work_completed", multiple=True, help="A completed item (appended).")
@click.option("--pending", "work_pending", multiple=True,
              help="A remaining item (the list replaces the previous one).")
@click.option("--summary", "work_summary", multiple=True, help="A work-done bullet (appended).")
@click.option("--decision", "decisions", multiple=True, help="'**Label:** rationale' (appended).")
@click.option("--plan-file", "plan_files", multiple=True, help="PATH[::FIRST HEADING]")
@click.option("--reference", "references", multiple=True, help="URL[::TITLE]")
@click.option("--diff-summary", help="Replaces the git diff summary note.")
@click.option("--status", "status_", type=click.Choice(["open", "frozen", "closed"]))
@click.option("--trigger", help="Why now: manual, context_limit, git_commit, session_end…")
@click.option("--tag", "tags", multiple=True)
@click.option("--input", "input_", help="JSON file (or - for stdin) with the MCP tool's fields.")
def checkpoint(vault: Path | None, as_json: bool, session_id: str | None, tool: str | None,
               input_: str | None, **fields: Any) -> None:
    """Save the session's state: appends and replaces per field, creating it if needed."""
    from ocm.vault.sessions import CheckpointInput

    data: dict[str, Any] = _read_json_input(input_) if input_ else {}
    session_id = session_id or data.pop("session_id", None)
    tool = tool or data.pop("tool", None)
    fields["status"] = fields.pop("status_")
    for name, value in fields.items():
        if value in (None, ()):
            continue
        if name == "plan_files":
            value = [dict(zip(("path", "header"), _split_pair(v), strict=True)) for v in value]
        elif name == "references":
            value = [dict(zip(("url", "title"), _split_pair(v), strict=True)) for v in value]
        elif isinstance(value, tuple):
            value = list(value)
        data[name] = value
    inp = CheckpointInput.from_mapping(data)
    project = _project(vault)
    result = project.checkpoint(inp, session_id=session_id, tool=tool)
    if as_json:
        render.emit_json(render.write_result_json(result))
    elif not result.changed:
        click.echo(f"Nothing to change: {result.id} already says that\n{result.path.resolve()}")
    else:
        click.echo(f"Checkpoint saved: {result.id} ({result.status})\n{result.path.resolve()}")


@cli.command("list")
@VAULT_OPTION
@JSON_OPTION
@click.option("--limit", default=10, show_default=True)
@click.option("--tool")
@click.option("--status", type=click.Choice(["open", "frozen", "closed"]))
def list_(vault: Path | None, as_json: bool, limit: int, tool: str | None,
          status: str | None) -> None:
    """Recent sessions, newest first."""
    project = _project(vault)
    hits = project.list_sessions(limit=limit, tool=tool, status=status)
    render.notices(project)
    if as_json:
        render.emit_json([h.to_json() for h in hits])
    else:
        render.hits_table(hits, "Sessions", show_score=False)
        render.paths_footer(hits)


@cli.command()
@VAULT_OPTION
@JSON_OPTION
@click.argument("session_id")
def files(vault: Path | None, as_json: bool, session_id: str) -> None:
    """Files a session touched (created, modified, deleted)."""
    rows = _project(vault).session_files(session_id)
    if as_json:
        render.emit_json(rows)
    elif not rows:
        click.echo("No files recorded.")
    else:
        for row in rows:
            click.echo(f"{row['change_type']:<9} {row['path']}")


@cli.command()
@VAULT_OPTION
@JSON_OPTION
@click.argument("note_id")
def show(vault: Path | None, as_json: bool, note_id: str) -> None:
    """Print a session or memory note's Markdown; `ID#Heading` prints one section (--json:
    with its frontmatter and path)."""
    note = _project(vault).get(note_id)
    if as_json:
        render.emit_json(note)
    else:
        click.echo(note["markdown"], nl=False)


# ----------------------------------------------------------------------------- search


@cli.command()
@VAULT_OPTION
@JSON_OPTION
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", default=searching.DEFAULT_LIMIT, show_default=True)
@click.option("--kind", type=click.Choice(["session", "memory", "transcript"]))
@click.option("--type", "types", multiple=True, help="Memory type (repeatable).")
@click.option("--status", help="Only this status (shows resolved/archived if asked).")
@click.option("--tool", help="Only sessions from this tool.")
@click.option("--since", help="YYYY-MM-DD or a phrase like 'last week'.")
@click.option("--until", help="YYYY-MM-DD (exclusive).")
@click.option("--file", "file_", help="Only notes that touched a path containing this.")
@click.option("--tag")
@click.option("--scope", type=click.Choice(["project", "user", "global"]),
              default=searching.DEFAULT_SCOPE, show_default=True)
@click.option("--include-resolved", is_flag=True, help="Also show resolved and archived.")
@click.option("--explain", is_flag=True, help="Show each field's share of the score.")
@click.option("--chunks", is_flag=True,
              help="List matching sections (chunks) instead of one result per note.")
@click.option("--author", help="Only notes written by this person (part of a git name or email).")
def search(vault: Path | None, as_json: bool, query: tuple[str, ...], limit: int,
           kind: str | None, types: tuple[str, ...], status: str | None, tool: str | None,
           since: str | None, until: str | None, file_: str | None, tag: str | None,
           scope: str, include_resolved: bool, explain: bool, chunks: bool,
           author: str | None) -> None:
    """Search sessions and memories (filters can be written in the query: 'last week').
    Each result names its best section (`file.md#Heading`, line) with a snippet."""
    searching.run(vault=vault, as_json=as_json, query=query, limit=limit, kind=kind,
                  types=types, status=status, tool=tool, since=since, until=until,
                  file_=file_, tag=tag, scope=scope, include_resolved=include_resolved,
                  explain=explain, chunks=chunks, author=author)


@cli.command()
@VAULT_OPTION
@JSON_OPTION
@click.argument("query", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["prompt", "snippets", "json"]),
              default="prompt", show_default=True)
@click.option("--budget", default=6000, show_default=True, help="Characters at most.")
@click.option("--session", "session_id", help="The ocm session the brief is for.")
def recall(vault: Path | None, as_json: bool, query: tuple[str, ...], fmt: str, budget: int,
           session_id: str | None) -> None:
    """The context brief for a session start: pinned memories, last session, relevant notes."""
    project = _project(vault)
    brief = project.recall(" ".join(query) or None, budget=budget,
                           fmt="json" if as_json else fmt, session_id=session_id)
    render.notices(project)
    click.echo(brief.text)


# ----------------------------------------------------------------------------- memories


@cli.command()
@VAULT_OPTION
@JSON_OPTION
@click.argument("text")
@click.option("--type", "memory_type", required=True,
              help=f"One of {', '.join(MEMORY_TYPES)}; aliases such as warning, incident, "
                   "rule, insight map onto them.")
@click.option("--title")
@click.option("--file", "files_", multiple=True)
@click.option("--tag", "tags", multiple=True)
@click.option("--key", help="One active memory per key.")
@click.option("--supersede-reason", help="Required to replace the active memory of a key.")
@click.option("--scope", type=click.Choice(["project", "user"]), default="project",
              show_default=True)
@click.option("--importance", type=int)
@click.option("--session", "session_id", help="Session that produced it.")
@click.option("--no-auto-supersede", "no_auto", is_flag=True,
              help="Keep older similar records of this type active.")
@click.option("--force", is_flag=True,
              help="Store it even if it nearly copies a superseded, resolved or archived one.")
def remember(vault: Path | None, as_json: bool, text: str, memory_type: str, title: str | None,
             files_: tuple[str, ...], tags: tuple[str, ...], key: str | None,
             supersede_reason: str | None, scope: str, importance: int | None,
             session_id: str | None, no_auto: bool, force: bool) -> None:
    """Store a memory record (use - as TEXT to read it from stdin)."""
    if text == "-":
        text = _stdin_text()
    project = _project(vault)
    result = project.remember(text, memory_type, title=title, files=list(files_),
                              tags=list(tags), key=key, supersede_reason=supersede_reason,
                              scope=scope, importance=importance, session=session_id,
                              auto_supersede=not no_auto, force=force)
    if as_json:
        render.emit_json(render.write_result_json(result))
    elif not result.changed and result.status != "active":
        notice = result.notice or "not stored"
        click.echo(f"{notice[:1].upper()}{notice[1:]}\n{result.path.resolve()}")
    else:
        extra = f"; {result.notice}" if result.notice else ""
        click.echo(f"Remembered {result.id}{extra}\n{result.path.resolve()}")


@cli.command()
@VAULT_OPTION
@JSON_OPTION
@click.option("--type", "types", multiple=True)
@click.option("--status", type=click.Choice(["active", "resolved", "superseded", "archived",
                                             "all"]), default="active", show_default=True)
@click.option("--tag")
@click.option("--file", "file_")
@click.option("--limit", default=50, show_default=True)
@click.option("--scope", type=click.Choice(["project", "user", "global"]), default="project",
              show_default=True)
@click.option("--author", help="Only memories written by this person (part of a git name or "
                               "email; team vaults record it).")
def memories(vault: Path | None, as_json: bool, types: tuple[str, ...], status: str,
             tag: str | None, file_: str | None, limit: int, scope: str,
             author: str | None) -> None:
    """List memory records, newest first."""
    project = _project(vault)
    hits = project.list_memories(types=types, status=None if status == "all" else status,
                                 limit=limit, scope=scope, tag=tag, file=file_, author=author)
    render.notices(project)
    if as_json:
        render.emit_json([h.to_json() for h in hits])
    else:
        render.hits_table(hits, "Memories", show_score=False, show_project=scope == "global")
        render.paths_footer(hits)


@cli.command()
@VAULT_OPTION
@JSON_OPTION
@click.argument("note_id")
def get(vault: Path | None, as_json: bool, note_id: str) -> None:
    """A note's frontmatter and text."""
    note = _project(vault).get(note_id)
    if as_json:
        render.emit_json(note)
    else:
        click.echo(note["markdown"], nl=False)


@cli.command()
@VAULT_OPTION
@JSON_OPTION
@click.argument("memory_id")
@click.option("--text", "content", help="New text (replaces it; use - to read stdin).")
@click.option("--title", help="New title.")
@click.option("--file", "files_", multiple=True,
              help="Replace the file list with these (repeatable).")
@click.option("--add-file", "add_files", multiple=True, help="Add a file (repeatable).")
@click.option("--remove-file", "remove_files", multiple=True,
              help="Remove a file (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Replace the tags with these (repeatable).")
@click.option("--add-tag", "add_tags", multiple=True, help="Add a tag (repeatable).")
@click.option("--remove-tag", "remove_tags", multiple=True, help="Remove a tag (repeatable).")
@click.option("--importance", type=int, help="1-10.")
@click.option("--type", "memory_type", help="Reclassify (moves the file).")
@click.option("--key", help="New key ('' clears it).")
def update(vault: Path | None, as_json: bool, memory_id: str, content: str | None,
           title: str | None, files_: tuple[str, ...], add_files: tuple[str, ...],
           remove_files: tuple[str, ...], tags: tuple[str, ...], add_tags: tuple[str, ...],
           remove_tags: tuple[str, ...], importance: int | None, memory_type: str | None,
           key: str | None) -> None:
    """Change a memory's text or metadata (a change of text or files also re-stamps it
    against HEAD, like `ocm verify`)."""
    for replace, add, remove, name in ((files_, add_files, remove_files, "file"),
                                       (tags, add_tags, remove_tags, "tag")):
        if replace and (add or remove):
            raise OcmError(f"--{name} replaces the list: use it alone, or --add-{name} / "
                           f"--remove-{name}")
    if content == "-":
        content = _stdin_text()
    result = _project(vault).update_memory(
        memory_id, content=content, title=title, files=list(files_) if files_ else None,
        tags=list(tags) if tags else None, importance=importance, memory_type=memory_type,
        key=key, add_files=list(add_files), remove_files=list(remove_files),
        add_tags=list(add_tags), remove_tags=list(remove_tags))
    if as_json:
        render.emit_json(render.write_result_json(result))
    elif not result.changed:
        click.echo(f"Nothing to change: {result.id} already says that\n{result.path.resolve()}")
    else:
        click.echo(f"Updated {result.id}\n{result.path.resolve()}")


@cli.command()
@VAULT_OPTION
@JSON_OPTION
@click.argument("memory_id")
def reactivate(vault: Path | None, as_json: bool, memory_id: str) -> None:
    """Make a resolved, superseded or archived memory active again (its replacement, if
    any, stays active and no longer claims to supersede it)."""
    result = _project(vault).reactivate(memory_id)
    if as_json:
        render.emit_json(render.write_result_json(result))
    else:
        click.echo(f"{result.id}: {result.status} ({result.notice})")


@cli.command()
@VAULT_OPTION
@JSON_OPTION
@click.argument("memory_id")
def verify(vault: Path | None, as_json: bool, memory_id: str) -> None:
    """Mark a memory checked against the code at HEAD: re-stamps its git_sha, so `ocm stale`
    stops flagging it."""
    result = _project(vault).verify_memory(memory_id)
    if as_json:
        render.emit_json(render.write_result_json(result))
    else:
        click.echo(f"{result.id}: {result.notice}")


@cli.command()
@VAULT_OPTION
@JSON_OPTION
@click.argument("memory_id", required=False)
@click.option("--session", "session_id", help="Resolve every active memory of this session.")
@click.option("--superseded-by", help="Mark superseded by this memory instead of resolved.")
@click.option("--reason")
def resolve(vault: Path | None, as_json: bool, memory_id: str | None, session_id: str | None,
            superseded_by: str | None, reason: str | None) -> None:
    """Mark a memory resolved (or superseded), or all of a session's memories."""
    project = _project(vault)
    if bool(memory_id) == bool(session_id):
        raise OcmError("give a memory id or --session SESSION_ID (not both)")
    if session_id:
        results = project.resolve_by_session(session_id, reason=reason)
    else:
        status_ = "superseded" if superseded_by else "resolved"
        results = [project.set_memory_status(memory_id or "", status_,
                                             superseded_by=superseded_by, reason=reason)]
    if as_json:
        render.emit_json([render.write_result_json(r) for r in results])
    else:
        for r in results:
            click.echo(f"{r.id}: {'' if r.changed else 'already '}{r.status}")
        if not results:
            click.echo("No active memories for that session.")


@cli.command()
@VAULT_OPTION
@JSON_OPTION
@click.argument("memory_id")
def archive(vault: Path | None, as_json: bool, memory_id: str) -> None:
    """Hide a memory from recall and default search (reversible; the file stays)."""
    result = _project(vault).forget(memory_id, delete=False)
    if as_json:
        render.emit_json(render.write_result_json(result))
    else:
        click.echo(f"{result.id}: {'' if result.changed else 'already '}archived")


@cli.command()
@VAULT_OPTION
@JSON_OPTION
@click.argument("memory_id")
@click.option("--delete", is_flag=True, help="Delete the file instead of archiving it.")
def forget(vault: Path | None, as_json: bool, memory_id: str, delete: bool) -> None:
    """Archive a memory, or delete its file with --delete."""
    result = _project(vault).forget(memory_id, delete=delete)
    if as_json:
        render.emit_json(render.write_result_json(result))
    else:
        done = f"{'' if result.changed else 'already '}{result.status}"
        click.echo(f"{result.id}: {done}" + (f" ({result.notice})" if result.notice and
                                              result.changed else ""))


@cli.command()
def mcp() -> None:
    """Run the MCP server on stdio (what agents launch)."""
    from ocm.mcp_server.server import main as serve

    serve()


def main() -> None:
    cli(prog_name="ocm")


if __name__ == "__main__":
    main()
