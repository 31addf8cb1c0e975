"""`ocm search`: what it does and what it prints, for both ways in: the click command
(ocm/cli/main.py) and the lean entry point (ocm/cli/lean.py). Imports neither click nor
rich (rich only when it prints a table)."""

from __future__ import annotations

import sys
from pathlib import Path

from ocm.vault.errors import OcmError
from ocm.vault.freshness import scanahead

# What only the search needs (datetime, the output's json and typing) is imported once it
# runs, after `look_ahead` started what runs beside it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime

DEFAULT_LIMIT = 10
DEFAULT_SCOPE = "project"


def parse_date(value: str | None, what: str) -> datetime | None:
    if value is None:
        return None
    from ocm.indexer.query import parse_query
    from ocm.vault.clock import now, parse_timestamp

    stamp = parse_timestamp(value)
    if stamp is not None:
        return stamp
    parsed = parse_query(value, now())
    found = parsed.since if what == "since" else (parsed.until or parsed.since)
    if found is None:
        raise OcmError(f"cannot read --{what} {value!r}: use YYYY-MM-DD or a phrase like "
                       "'last week'")
    return found


def located(vault: str | Path | None) -> tuple[Path, Path, bool] | None:
    """The vault a search with `--vault VAULT` (or none) reads, found before the search
    imports what it needs (`ocm.vault.paths.locate`), with `look_ahead` started on it;
    None when it cannot be found (the search then says why)."""
    from ocm.vault.paths import locate

    try:
        location = locate(vault)
    except (OcmError, OSError, ValueError):
        return None
    look_ahead(location[0])
    return location


def look_ahead(vault_dir: Path) -> None:
    """Start what a search of the vault at `vault_dir` needs when it has an index, each
    once per process: the freshness scan in a child (ocm/vault/freshness/scanahead.py) and
    the reading of the index files in full in a thread, before any is read
    (ocm/indexer/checksums.py). Both run while the search is still importing what it
    needs; the scan, the longer, first (at 100k notes it ends after the search)."""
    from ocm.vault.paths import INDEX_DIRNAME, INDEX_MANIFEST

    index_dir = vault_dir / INDEX_DIRNAME
    if (index_dir / INDEX_MANIFEST).exists():
        scanahead.start(str(vault_dir))
        from ocm.indexer import checksums

        checksums.check_ahead(index_dir, also=(checksums.VECTORS,))


def run(*, query: tuple[str, ...], vault: Path | None = None, as_json: bool = False,
        limit: int = DEFAULT_LIMIT, kind: str | None = None, types: tuple[str, ...] = (),
        status: str | None = None, tool: str | None = None, since: str | None = None,
        until: str | None = None, file_: str | None = None, tag: str | None = None,
        scope: str = DEFAULT_SCOPE, include_resolved: bool = False, explain: bool = False,
        chunks: bool = False, author: str | None = None,
        location: tuple[Path, Path, bool] | None = None) -> object:
    """Search and print; an `OcmError` (bad value, no vault) is raised before anything is
    printed. `location`: the vault as `located` found it. Returns the project searched:
    a process that ends at once after it (ocm/cli/lean.py) keeps it to the end rather than
    close its index readers one by one."""
    from ocm.indexer import whooshlean

    from . import render

    whooshlean.install()  # before Whoosh loads: two of its modules a search never runs
    from ocm.project import Project, SearchRequest, filters_line

    project = Project.open(vault=vault, strict=True, location=location)
    req = SearchRequest(
        query=" ".join(query), limit=limit, kind=kind, types=types, status=status, tool=tool,
        since=parse_date(since, "since"), until=parse_date(until, "until"), file=file_,
        tag=tag, scope=scope, include_resolved=include_resolved, explain=explain,
        group=not chunks, author=author)
    # The freshness scan runs in a child while the search imports what it needs and while
    # it searches (Project.search keeps what it found only if the listing, once in, says
    # nothing changed). A listing the search did not take (it raised first, or its index
    # had scanned before) would be stale for any later search in this process: dropped.
    # With no manifest there is no index to vouch for: the first answer lists the notes by
    # name instead (NoteIndex.sync), and a `find` started here would only be killed, its
    # start paid by this process.
    root = str(project.vault.root)
    look_ahead(project.vault.root)
    try:
        hits = project.search(req)
    finally:
        scanahead.discard(root)
    render.notices(project)
    if as_json:
        # While the index is still being built: {indexed, total} on each hit.
        extra = {"indexing": project.indexing} if project.indexing else {}
        render.emit_json([h.to_json() | extra for h in hits])
        return project
    render.hits_table(hits, f"Search: {' '.join(query)}", show_project=scope == "global")
    render.paths_footer(hits)
    if explain or (not hits and project.applied_filters.get("filters")):
        sys.stdout.write(f"{filters_line(project.applied_filters)}\n")
    return project
