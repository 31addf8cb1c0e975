"""Running the dashboard: a loopback socket (the port asked for, or a free one), the address
printed, the browser opened where there is one to open."""

from __future__ import annotations

import os
import socket
import sys
import webbrowser
from collections.abc import Callable

from ocm.project import Project
from ocm.vault.errors import InvalidInput

HOST = "127.0.0.1"


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:`port` (0: any free port), held from here on so no
    other program can take the port between choosing it and serving."""
    if not 0 <= port <= 65535:
        raise InvalidInput(f"--port must be from 0 (any free port) to 65535, not {port}")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise InvalidInput(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from None
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def has_browser() -> bool:
    """A graphical browser can be opened: macOS, Windows, or a display on other systems (on a
    bare terminal `webbrowser` would start a text browser in the user's terminal)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def serve(project: Project, port: int = 0, open_browser: bool = True,
          say: Callable[[str], None] = print) -> None:
    """Serve until interrupted."""
    import uvicorn

    from .app import build

    project.require_vault()
    sock = bind(port)
    port = sock.getsockname()[1]
    url = f"http://{HOST}:{port}/"
    app = build(project, port)
    say(f"ocm ui: {url}  (vault {project.vault.root}; Ctrl-C stops it)")
    if open_browser and has_browser():
        webbrowser.open(url)
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1,
                            lifespan="on")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
