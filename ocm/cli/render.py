"""Output for people (rich tables) and programs (stable JSON)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ocm.indexer.search import Hit
    from ocm.vault.folder import WriteResult


def _json_value(value: Any) -> str:
    """Dates as the notes write them (YYYY-MM-DDTHH:MM:SS), in every JSON output."""
    from datetime import date, datetime

    from ocm.vault.clock import format_timestamp

    if isinstance(value, datetime):
        return format_timestamp(value)
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def notices(project: Any) -> None:
    """What a read noticed on the way (an index rebuilt, hook records not applied)."""
    for notice in getattr(project, "notices", []):
        sys.stderr.write(f"{notice}\n")


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=_json_value)
                     + "\n")


def write_result_json(result: WriteResult) -> dict[str, Any]:
    out = {"id": result.id, "kind": result.kind, "markdown_path": str(result.path.resolve()),
           "status": result.status, "changed": result.changed}
    if result.notice:
        out["notice"] = result.notice
    return out


def console():  # -> rich.console.Console
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


def hits_table(hits: list[Hit], title: str, show_score: bool = True,
               show_project: bool = False) -> None:
    from rich.markup import escape
    from rich.table import Table

    out = console()
    if not hits:
        out.print("No results.")
        return
    table = Table(title=title, expand=False, pad_edge=False)
    if show_score:
        table.add_column("#", justify="right", no_wrap=True)
        table.add_column("score", justify="right", no_wrap=True)
    table.add_column("date", no_wrap=True)
    table.add_column("type", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("title / id", overflow="fold", ratio=1)
    for hit in hits:
        status = "superseded →" if hit.superseded_by else hit.status
        kind = hit.type if hit.kind == "memory" else f"session:{hit.tool}"
        files = f"\n[dim]{', '.join(hit.top_files)}[/dim]" if hit.top_files else ""
        label = f"[bold]\\[{hit.project}][/bold] " if show_project and hit.project else ""
        cell = f"{label}{hit.title}\n[dim]{hit.id}[/dim]{files}"
        if hit.superseded_by:
            cell += f"\n[dim]→ {hit.superseded_by}[/dim]"
        if hit.matched == "meaning":
            # No word of the query is in it: the agent or person should know.
            cell += "\n[magenta]meaning only (no query word)[/magenta]"
        if hit.chunk is not None:
            where = f"#{hit.chunk.section} " if hit.chunk.section else ""
            cell += f"\n[cyan]{escape(where)}line {hit.chunk.line}[/cyan]"
            cell += f"\n[dim]{escape(hit.chunk.snippet)}[/dim]" if hit.chunk.snippet else ""
        if hit.meta.get("changed_files"):
            status += " (stale)"
            cell += f"\n[yellow]verify: {', '.join(hit.meta['changed_files'][:3])} changed[/]"
        row = [hit.date.strftime("%Y-%m-%d") if hit.date else "", kind, status, cell]
        if show_score:
            row = [str(hit.rank), f"{hit.score:.1f}", *row]
        table.add_row(*row)
    out.print(table)
    for hit in hits:
        if hit.explain:
            out.print(f"[dim]{escape(explain_line(hit))}[/dim]")


EXPLAIN_FACTORS = ("decay", "importance", "intent", "date", "superseded")


def explain_line(hit: Hit) -> str:
    """'#1 id [both]: title=3.1, text=1.2; bm25f 4.3 (best 4.3) x 0.8 + cosine 0.41 in
    [0.1, 0.41] x 0.2 = 100.0; x decay 0.98 x ... = 98.1 (threshold 11.8)'."""
    info = hit.explain or {}
    fields = ", ".join(f"{k}={v}" for k, v in info.get("fields", {}).items())
    factors = " x ".join(f"{name} {info[name]}" for name in EXPLAIN_FACTORS if name in info)
    score = info.get("score", round(hit.score, 4))
    threshold = f" (threshold {info['threshold']})" if "threshold" in info else ""
    matched = f" [{hit.matched}]" if hit.matched else ""
    base = f"bm25f {info.get('bm25f')}"
    if "fused" in info:
        low, high = info["cosine_range"]
        words_w, meaning_w = info["weights"]
        base += (f" (best {info['best_words']}) x {words_w} + cosine {info['cosine']} "
                 f"in [{low}, {high}] x {meaning_w} = {info.get('base')}")
    return f"#{hit.rank} {hit.id}{matched}: {fields}; {base}; x {factors} = {score}{threshold}"


def paths_footer(hits: list[Hit]) -> None:
    # Plain lines, never wrapped (a table cell folds long words), so an id or a path can be
    # copied or clicked.
    for position, hit in enumerate(hits, 1):
        line = f":{hit.chunk.line}" if hit.chunk is not None else ""
        sys.stdout.write(f"{hit.rank or position}  {hit.id}  {hit.path}{line}\n")


def kv_table(rows: list[tuple[str, str]], title: str | None = None) -> None:
    from rich.table import Table

    table = Table(show_header=False, title=title, box=None)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in rows:
        table.add_row(key, value)
    console().print(table)
