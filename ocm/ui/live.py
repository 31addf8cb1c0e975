"""Server-sent events: which notes changed, as soon as an agent writes one or an editor saves
one. One poller per dashboard asks the facade (`Project.note_changes`: kernel events through
the watch the MCP server uses, a listing comparison elsewhere) twice a second and hands what
it found to every open page."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.requests import Request

POLL_SECONDS = 0.5
KEEPALIVE_SECONDS = 15.0


class Feed:
    def __init__(self, call: Callable[..., Any], changes: Callable[[], set[str] | None]) -> None:
        self._call = call
        self._changes = changes
        self._listeners: set[asyncio.Queue[list[str]]] = set()
        # Goes up whenever a poll finds changed notes: what was derived from the vault
        # before (the brief) is stale when it differs.
        self.version = 0

    def poll(self) -> list[str]:
        """The notes changed since the last poll, sorted (none on the first)."""
        found = self._call(self._changes)
        if found:
            self.version += 1
        return sorted(found or ())

    def publish(self, changed: list[str]) -> None:
        for queue in list(self._listeners):
            queue.put_nowait(changed)

    async def _run(self) -> None:
        while True:
            try:
                changed = await asyncio.to_thread(self.poll)
            except Exception:  # noqa: BLE001 - a failed look must not end the live view
                changed = []
            if changed:
                self.publish(changed)
            await asyncio.sleep(POLL_SECONDS)

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: Any) -> AsyncIterator[None]:
        await asyncio.to_thread(self.poll)  # starts looking: later polls report changes
        task = asyncio.create_task(self._run())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def stream(self, request: Request) -> AsyncIterator[str]:
        """`event: notes` with the changed paths as JSON, for as long as the page is open."""
        queue: asyncio.Queue[list[str]] = asyncio.Queue()
        self._listeners.add(queue)
        try:
            yield "retry: 2000\n: connected\n\n"
            while not await request.is_disconnected():
                try:
                    changed = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
                except TimeoutError:
                    yield ": keepalive\n\n"
                    continue
                yield f"event: notes\ndata: {json.dumps(changed)}\n\n"
        finally:
            self._listeners.discard(queue)
