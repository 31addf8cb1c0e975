"""`ocm ui`: the local dashboard (ocm/ui/)."""

from __future__ import annotations

from pathlib import Path

import click

_VAULT = click.option(
    "--vault", "vault", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Vault folder (default: <project root>/.openCodeMemory, or $OCM_VAULT).")


@click.command("ui")
@_VAULT
@click.option("--port", type=int, default=0, show_default=True,
              help="Port on 127.0.0.1 (0: a free one).")
@click.option("--no-browser", is_flag=True, help="Do not open a browser; print the address.")
def ui(vault: Path | None, port: int, no_browser: bool) -> None:
    """Serve a dashboard of this project's memory on 127.0.0.1 (timeline, memories, search,
    actions, live updates) and open it in the browser."""
    from ocm.project import Project
    from ocm.ui.serve import serve

    serve(Project.open(vault=vault, strict=True), port=port, open_browser=not no_browser,
          say=click.echo)
