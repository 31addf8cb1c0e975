"""The dashboard's pages and actions (Starlette). Everything it shows or changes goes through
the `Project` facade, as the CLI and the MCP server do; one lock serialises those calls (the
facade and its indexes are not made for threads)."""

from __future__ import annotations

import secrets
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ocm.project import KINDS, SEARCH_SCOPES, Project, SearchRequest, filters_line
from ocm.vault.errors import InvalidInput, NotFound, OcmError

from . import charts, live
from .guard import TOKEN_FIELD, Guard, own_hosts
from .text import body_of, note_link, plain, to_html

PAGE = 50  # notes on one page of the timeline and the memories
CHAIN_MAX = 20  # steps followed each way along a supersede chain
MEMORY_STATUSES = ("active", "resolved", "superseded", "archived")
SESSION_STATUSES = ("open", "frozen", "closed")
T = TypeVar("T")


class Dashboard:
    """The state of one run: the project, its lock, its token, its live feed."""

    def __init__(self, project: Project, token: str) -> None:
        self.project = project
        self.token = token
        self.lock = threading.Lock()
        self.feed = live.Feed(self.call, project.note_changes)
        self.briefs: dict[int, str] = {}  # the brief as of the feed's version
        self.env = Environment(loader=PackageLoader("ocm.ui", "templates"), autoescape=True,
                               trim_blocks=True, lstrip_blocks=True)
        self.env.globals.update(note_link=note_link, plain=plain, token=token,
                                token_field=TOKEN_FIELD, project_name=project.vault.project,
                                live=False)

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        with self.lock:
            self.project.notices.clear()
            return fn(*args, **kwargs)

    def page(self, name: str, code: int = 200, **context: Any) -> HTMLResponse:
        context.setdefault("notices", list(self.project.notices))
        html = self.env.get_template(name).render(**context)
        return HTMLResponse(html, status_code=code)


def _int(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidInput(f"{name} must be a whole number, not {raw!r}") from None
    if not low <= value <= high:
        raise InvalidInput(f"{name} must be from {low} to {high}")
    return value


def _choice(request: Request, name: str, allowed: tuple[str, ...]) -> str | None:
    value = request.query_params.get(name) or None
    if value is not None and value not in allowed:
        raise InvalidInput(f"unknown {name} {value!r}: expected one of {', '.join(allowed)}")
    return value


def _day(hit: Any) -> date | None:
    return hit.date.date() if isinstance(hit.date, datetime) else None


def _pages(offset: int, total: int, params: dict[str, str]) -> dict[str, str | int | None]:
    kept = {k: v for k, v in params.items() if v and k != "offset"}

    def link(at: int) -> str:
        return "?" + urlencode({**kept, "offset": at})

    return {"offset": offset, "total": total, "shown_to": min(offset + PAGE, total),
            "prev": link(max(0, offset - PAGE)) if offset else None,
            "next": link(offset + PAGE) if offset + PAGE < total else None}


def build(project: Project, port: int, token: str | None = None) -> Starlette:
    """The dashboard app for `project`, answering only as http://127.0.0.1:`port` (or
    localhost), state changes only with `token` (a fresh one when not given)."""
    ui = Dashboard(project, token or secrets.token_urlsafe(24))

    def timeline(request: Request) -> Response:
        offset = _int(request, "offset", 0, 0, 10**9)
        tool = request.query_params.get("tool") or None
        status = _choice(request, "status", SESSION_STATUSES)
        sessions, total = ui.call(project.browse, "session", offset, PAGE, tool=tool,
                                  status=status, stale=False)
        turns = ui.call(project.transcript_turns, [s.id for s in sessions])
        days: dict[date | None, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
        for hit in sessions:
            days[_day(hit)][hit.tool or "unknown"].append(hit)
        return ui.page("timeline.html", days=days, turns=turns, tool=tool or "",
                       status=status or "", statuses=SESSION_STATUSES,
                       pages=_pages(offset, total, dict(request.query_params)), live=True)

    def memories(request: Request) -> Response:
        offset = _int(request, "offset", 0, 0, 10**9)
        scope = _choice(request, "scope", ("project", "user")) or "project"
        status = request.query_params.get("status", "active")
        if status == "any":
            status = ""
        if status and status not in MEMORY_STATUSES:
            raise InvalidInput(f"unknown status {status!r}: expected one of "
                               f"{', '.join(MEMORY_STATUSES)} or any")
        memory_type = request.query_params.get("type") or ""
        hits, total = ui.call(project.browse, "memory", offset, PAGE,
                              types=(memory_type,) if memory_type else (),
                              status=status or None, scope=scope)
        by_type: dict[str, Counter[str]] = defaultdict(Counter)
        for (memory_type_, status_), n in ui.call(project.tally, "memory", scope).items():
            by_type[memory_type_][status_] += n
        return ui.page("memories.html", hits=hits, by_type=by_type, type=memory_type,
                       status=status or "any", scope=scope, statuses=MEMORY_STATUSES,
                       pages=_pages(offset, total, dict(request.query_params)), live=True)

    def brief(request: Request) -> Response:
        from ocm.agents.base import BRIEF_CAP, DEFAULT_BRIEF_BUDGET
        from ocm.agents.brief import session_brief

        # Built from every pinned record's note (5.8 s CPU at 10k notes): kept until the
        # live feed sees a note change.
        version = ui.feed.version
        text = ui.briefs.get(version)
        if text is None:
            text = ui.call(session_brief, project, "", DEFAULT_BRIEF_BUDGET, BRIEF_CAP)
            ui.briefs = {version: text}
        return ui.page("brief.html", brief=text, budget=DEFAULT_BRIEF_BUDGET, live=True)

    def search(request: Request) -> Response:
        from ocm.cli.searching import parse_date

        q = request.query_params
        form = {k: q.get(k, "") for k in ("q", "kind", "status", "tool", "since", "until",
                                           "file", "tag", "scope", "author", "limit")}
        form["types"] = ", ".join(q.getlist("type"))
        flags = {k: bool(q.get(k)) for k in ("include_resolved", "explain", "chunks")}
        hits: list[Any] = []
        applied = ""
        if form["q"].strip():
            req = SearchRequest(
                query=form["q"], limit=_int(request, "limit", 10, 1, 100),
                kind=_choice(request, "kind", KINDS),
                types=tuple(t.strip() for t in q.getlist("type") if t.strip()),
                status=form["status"] or None, tool=form["tool"] or None,
                since=parse_date(form["since"] or None, "since"),
                until=parse_date(form["until"] or None, "until"),
                file=form["file"] or None, tag=form["tag"] or None,
                scope=_choice(request, "scope", SEARCH_SCOPES) or "project",
                include_resolved=flags["include_resolved"], explain=flags["explain"],
                group=not flags["chunks"], author=form["author"] or None)
            hits = ui.call(project.search, req)
            if flags["explain"] or not hits:
                applied = filters_line(project.applied_filters)
        return ui.page("search.html", form=form, flags=flags, hits=hits, applied=applied,
                       kinds=KINDS, scopes=SEARCH_SCOPES, searched=bool(form["q"].strip()),
                       why=_why)

    def activity(request: Request) -> Response:
        per_day_sessions: dict[date, Counter[str]] = defaultdict(Counter)
        for (day, tool), n in ui.call(project.daily, "session", "tool").items():
            per_day_sessions[day][tool or "unknown"] += n
        by_status: dict[str, Counter[str]] = defaultdict(Counter)
        for (_, status), n in ui.call(project.tally, "session").items():
            by_status["sessions"][status] += n
        by_type: dict[str, Counter[str]] = defaultdict(Counter)
        for (memory_type, status), n in ui.call(project.tally, "memory").items():
            by_type[memory_type][status] += n
        # A record's tool is its session's: the records' own notes say which session.
        records, _ = ui.call(project.browse, "memory", 0, None, stale=False)
        sessions = sorted({str(r.meta.get("session")) for r in records if r.meta.get("session")})
        tool_of = {hit.id: hit.tool or "unknown"
                   for hit in ui.call(project.lookup, "session", sessions)}
        per_day_records: dict[date, Counter[str]] = defaultdict(Counter)
        for r in records:
            if (when := _day(r)) is not None:
                per_day_records[when][tool_of.get(str(r.meta.get("session") or ""),
                                                 "by hand")] += 1
        pictures = [
            charts.daily_bars(per_day_sessions, "Sessions per day, by tool"),
            charts.daily_bars(per_day_records, "Records written per day, by the tool "
                                               "of their session"),
            charts.stacked_rows(by_type, "Records per type, by status"),
            charts.stacked_rows(by_status, "Sessions by status"),
        ]
        return ui.page("activity.html", pictures=pictures, live=True)

    def note(request: Request) -> Response:
        note_id = request.path_params["note_id"]
        found = ui.call(project.get, note_id)
        fm = found["frontmatter"]
        chain = _chain(ui, project, found) if found["kind"] == "memory" else []
        return ui.page("note.html", note=found, fm=fm, body=to_html(body_of(found["markdown"])),
                       chain=chain, statuses=MEMORY_STATUSES, live=False)

    def act(request: Request) -> Response:
        return _act(ui, project, request)

    async def act_async(request: Request) -> Response:
        form = await request.form()
        request.state.form = {k: str(v) for k, v in form.items()}
        from starlette.concurrency import run_in_threadpool

        return await run_in_threadpool(act, request)

    async def events(request: Request) -> Response:
        return StreamingResponse(ui.feed.stream(request), media_type="text/event-stream",
                                 headers={"x-accel-buffering": "no"})

    routes = [
        Route("/", timeline), Route("/memories", memories), Route("/brief", brief),
        Route("/search", search), Route("/activity", activity),
        Route("/note/{note_id:str}", note),
        Route("/note/{note_id:str}/{action:str}", act_async, methods=["POST"]),
        Route("/events", events),
        Mount("/static", StaticFiles(packages=[("ocm.ui", "static")]), name="static"),
    ]

    def failed(request: Request, exc: Exception) -> Response:
        status = 404 if isinstance(exc, NotFound) else 400
        return ui.page("error.html", code=status, message=str(exc), live=False)

    app = Starlette(routes=routes, exception_handlers={OcmError: failed},
                    lifespan=ui.feed.lifespan)
    app.state.dashboard = ui
    return Guard(app, own_hosts(port), ui.token)  # type: ignore[return-value]


def _why(hit: Any) -> dict[str, Any]:
    """What a hit says about why it was found: its section and snippet, what matched and
    how sure (`matched`/`confidence` where the search gives them), the score's parts."""
    chunk = getattr(hit, "chunk", None)
    out: dict[str, Any] = {
        "section": getattr(chunk, "section", "") or "",
        "snippet": getattr(chunk, "snippet", "") or hit.meta.get("snippet") or "",
        "anchor": getattr(chunk, "anchor", "") or "",
    }
    if hit.matched:
        out["matched"] = hit.matched
    if hit.confidence is not None:
        out["confidence"] = f"{hit.confidence:.2f}"
    if hit.explain:
        out["explain"] = hit.explain
    return out


def _chain(ui: Dashboard, project: Project, found: dict[str, Any]) -> list[dict[str, Any]]:
    """The supersede chain through this memory, oldest first: what it replaced, back to the
    first, and what replaced it, up to the newest (each step read through the facade)."""
    from ocm.vault.links import unlink

    def step(fm: dict[str, Any], key: str) -> Iterator[dict[str, Any]]:
        seen = {str(found["id"])}
        current = fm
        for _ in range(CHAIN_MAX):
            nxt = unlink(current.get(key))
            if not nxt or nxt in seen:
                return
            seen.add(nxt)
            try:
                note = ui.call(project.get, nxt)
            except OcmError:
                yield {"id": nxt, "title": "(missing)", "status": "?", "here": False}
                return
            current = note["frontmatter"]
            yield {"id": nxt, "title": plain(current.get("title")),
                   "status": plain(current.get("status")), "here": False,
                   "reason": plain(current.get("resolution") or "")}

    fm = found["frontmatter"]
    older = list(step(fm, "supersedes"))
    newer = list(step(fm, "superseded_by"))
    if not older and not newer:
        return []
    here = {"id": str(found["id"]), "title": plain(fm.get("title")),
            "status": plain(fm.get("status")), "here": True,
            "reason": plain(fm.get("resolution") or "")}
    return [*reversed(older), here, *newer]


def _act(ui: Dashboard, project: Project, request: Request) -> Response:
    """One action on a memory, through the facade; deleting asks first."""
    note_id = request.path_params["note_id"]
    action = request.path_params["action"]
    form: dict[str, str] = request.state.form
    if action == "forget" and form.get("delete") and form.get("confirm") != "yes":
        found = ui.call(project.get, note_id)
        return ui.page("confirm.html", note=found, live=False)
    calls: dict[str, Callable[[], Any]] = {
        "resolve": lambda: project.set_memory_status(note_id, "resolved",
                                                     reason=form.get("reason") or None),
        "archive": lambda: project.forget(note_id, delete=False),
        "reactivate": lambda: project.reactivate(note_id),
        "verify": lambda: project.verify_memory(note_id),
        "tags": lambda: project.update_memory(note_id, tags=[
            t.strip() for t in form.get("tags", "").split(",") if t.strip()]),
        "importance": lambda: project.update_memory(
            note_id, importance=_importance(form.get("importance", ""))),
        "forget": lambda: project.forget(note_id, delete=bool(form.get("delete"))),
    }
    if action not in calls:
        raise InvalidInput(f"unknown action {action!r}: expected one of {', '.join(calls)}")
    result = ui.call(calls[action])
    return ui.page("result.html", action=action, result=result,
                   path=Path(result.path).resolve(), deleted=action == "forget" and bool(
                       form.get("delete")), live=False)


def _importance(raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise InvalidInput(f"importance must be a whole number from 1 to 10, not {raw!r}"
                           ) from None
