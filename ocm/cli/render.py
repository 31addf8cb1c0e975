"""Output for people (rich tables) and programs (stable JSON)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ocm.indexer.search import Hit
    from ocm.vault.store import WriteResult


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def write_result_json(result: WriteResult) -> dict[str, Any]:
    out = {"id": result.id, "kind": result.kind, "markdown_path": str(result.path.resolve()),
           "status": result.status, "changed": result.changed}
    if result.notice:
        out["notice"] = result.notice
    return out


def console():  # -> rich.console.Console
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


def hits_table(hits: list[Hit], title: str, show_score: bool = True) -> None:
    from rich.table import Table

    out = console()
    if not hits:
        out.print("No results.")
        return
    table = Table(title=title, show_lines=False, expand=False)
    if show_score:
        table.add_column("#", justify="right")
        table.add_column("score", justify="right")
    table.add_column("id", overflow="fold")
    table.add_column("kind/type")
    table.add_column("date")
    table.add_column("status")
    table.add_column("title", overflow="fold", max_width=60)
    table.add_column("files", overflow="fold", max_width=40)
    for hit in hits:
        status = hit.status + (f" → {hit.superseded_by}" if hit.superseded_by else "")
        kind = hit.type if hit.kind == "memory" else f"session/{hit.tool}"
        row = [hit.id, kind, hit.date.strftime("%Y-%m-%d %H:%M") if hit.date else "", status,
               hit.title, ", ".join(hit.top_files)]
        if show_score:
            row = [str(hit.rank), f"{hit.score:.2f}", *row]
        table.add_row(*row)
    out.print(table)
    for hit in hits:
        if hit.explain:
            fields = ", ".join(f"{k}={v}" for k, v in hit.explain.get("fields", {}).items())
            out.print(f"[dim]#{hit.rank} {hit.id}: {fields}; bm25f={hit.explain.get('bm25f')}"
                      f" decay={hit.explain.get('decay')}[/dim]")


def paths_footer(hits: list[Hit]) -> None:
    out = console()
    for hit in hits:
        out.print(f"[dim]{hit.rank or '-'}[/dim] {hit.path}")


def kv_table(rows: list[tuple[str, str]], title: str | None = None) -> None:
    from rich.table import Table

    table = Table(show_header=False, title=title, box=None)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in rows:
        table.add_row(key, value)
    console().print(table)
