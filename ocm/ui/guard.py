"""What keeps the dashboard a local page for one person (an ASGI middleware).

* Every request must name the dashboard itself in `Host` (127.0.0.1 or localhost with its
  port): a web page on another site whose name was pointed at 127.0.0.1 (DNS rebinding)
  sends its own name there, and is refused.
* A request carrying `Origin` must come from the dashboard's own address: another site's
  script may not read or write through the user's browser.
* Every request that can change something (anything but GET/HEAD) carries this run's token,
  printed nowhere but in the dashboard's own pages (a form field or the `X-OCM-Token`
  header): a page elsewhere cannot know it.
* Responses forbid framing, sniffing and scripts from anywhere but the dashboard (the
  Content-Security-Policy also stops an injected inline script, should escaping ever fail).
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

TOKEN_FIELD = "token"
TOKEN_HEADER = "x-ocm-token"
SAFE_METHODS = frozenset({"GET", "HEAD"})
# Bodies of state-changing requests are small forms; anything bigger is refused unread.
MAX_BODY = 64 * 1024
HEADERS = [
    (b"content-security-policy",
     b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
     b"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    # Not no-referrer: under it Chromium sends `Origin: null` with the dashboard's own form
    # posts, which the Origin check must refuse (another site's sandboxed frame sends it).
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


def own_hosts(port: int) -> frozenset[str]:
    """The `Host` values that name the dashboard on `port`."""
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})


class Guard:
    """Refuses (403/413) what the module docstring says; passes the rest to `app`."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str], token: str) -> None:
        self.app = app
        self.hosts = frozenset(h.lower() for h in hosts)
        self.origins = frozenset(f"http://{h}" for h in self.hosts)
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers") or []}
        host = headers.get("host", "").strip().lower()
        if host not in self.hosts:
            await _refuse(send, 403, f"refused: Host {host!r} is not this dashboard")
            return
        origin = headers.get("origin")
        if origin is not None and origin.strip().lower() not in self.origins:
            await _refuse(send, 403, f"refused: Origin {origin!r} is not this dashboard")
            return
        if scope["type"] == "websocket":
            await _refuse(send, 403, "refused: no websockets here")
            return
        if scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, _with_headers(send))
            return
        body = b""
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > MAX_BODY:
                await _refuse(send, 413, "refused: request body too large")
                return
        given = headers.get(TOKEN_HEADER) or _form_token(headers, body)
        if not given or not hmac.compare_digest(given.encode(), self.token.encode()):
            await _refuse(send, 403, "refused: missing or wrong dashboard token "
                          "(reload the page: each run of `ocm ui` has its own)")
            return
        await self.app(scope, _replay(body), _with_headers(send))


def _form_token(headers: dict[str, str], body: bytes) -> str:
    if not headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        return ""
    try:
        values = parse_qs(body.decode("utf-8"), max_num_fields=100)
    except (UnicodeDecodeError, ValueError):
        return ""
    return (values.get(TOKEN_FIELD) or [""])[0]


def _replay(body: bytes) -> Receive:
    """A `receive` that hands the app the body the guard already read, once."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
        await send(message)

    return sending


async def _refuse(send: Send, status: int, text: str) -> None:
    body = text.encode("utf-8")
    start: dict[str, Any] = {"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()), *HEADERS]}
    await send(start)
    await send({"type": "http.response.body", "body": body})
