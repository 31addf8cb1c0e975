"""`ocm ui` over HTTP (Starlette's test client against the real app, a real vault made through
the facade): what it refuses (other hosts and origins, state changes without the run's
token), that a note's text stays text, and what each page and action shows."""

from __future__ import annotations

import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from ocm.project import Project
from ocm.ui.app import build
from ocm.ui.serve import bind
from ocm.vault.sessions import CheckpointInput

from .conftest import VENV_BIN, git

PORT = 48731
BASE = f"http://127.0.0.1:{PORT}"
TOKEN = "t0ken-for-tests"
HOSTILE = '<script>alert("owned")</script><img src=x onerror="alert(1)">'


@pytest.fixture
def filled(project: Project, repo: Path) -> Project:
    """Two sessions of two tools, memories with a supersede chain, a hostile note."""
    first_session = project.checkpoint(CheckpointInput(
        goal="Fix the 429 retry loop in the fetcher", work_pending=["add jitter to backoff"]),
        tool="claude-code")
    project.vault.record_file(first_session.id, "src/fetch.py", "modified")
    project.close_session(None)
    project.checkpoint(CheckpointInput(goal="Cursor session on the parser"), tool="cursor")
    first = project.remember("Retries use a fixed 2 s sleep between attempts.", "decision",
                             title="Retry delay", key="retry-delay", files=["src/fetch.py"])
    project.remember("Retries use exponential backoff with jitter, capped at 30 s.",
                     "decision", title="Retry delay", key="retry-delay",
                     supersede_reason="the fixed sleep hammered the API")
    project.remember(f"A note someone pasted: {HOSTILE} and **bold** text.", "gotcha",
                     title=f"Hostile {HOSTILE}", tags=["xss"])
    project.remember("The parser keeps line numbers 1-based.", "convention",
                     title="Parser line numbers", importance=7, files=["src/parser.py"])
    assert first.id
    return project


@pytest.fixture
def client(filled: Project) -> Iterator[TestClient]:
    with TestClient(build(filled, PORT, TOKEN), base_url=BASE) as c:
        yield c


def memory_id(project: Project, title: str, status: str | None = "active") -> str:
    hits, _ = project.browse("memory", 0, None, status=status)
    return next(h.id for h in hits if h.title == title)


# -- safety -------------------------------------------------------------------------------

def test_other_hosts_are_refused(client: TestClient) -> None:
    """DNS rebinding: a page of evil.example pointed at 127.0.0.1 sends its own name."""
    assert client.get("/").status_code == 200
    assert client.get("/", headers={"host": f"localhost:{PORT}"}).status_code == 200
    for host in ("evil.example", f"evil.example:{PORT}", "127.0.0.1", f"127.0.0.1:{PORT + 1}",
                 f"0.0.0.0:{PORT}", ""):
        response = client.get("/memories", headers={"host": host})
        assert response.status_code == 403, host
        assert "not this dashboard" in response.text
        assert "Retry delay" not in response.text


def test_other_origins_are_refused(client: TestClient, filled: Project) -> None:
    mid = memory_id(filled, "Parser line numbers")
    for origin in ("http://evil.example", "null", f"http://127.0.0.1:{PORT + 1}",
                   f"https://127.0.0.1:{PORT}"):
        assert client.get("/", headers={"origin": origin}).status_code == 403, origin
        response = client.post(f"/note/{mid}/archive", data={"token": TOKEN},
                               headers={"origin": origin})
        assert response.status_code == 403, origin
    assert filled.get(mid)["frontmatter"]["status"] == "active"
    ok = client.post(f"/note/{mid}/archive", data={"token": TOKEN},
                     headers={"origin": BASE})
    assert ok.status_code == 200
    assert filled.get(mid)["frontmatter"]["status"] == "archived"


def test_state_changes_need_the_runs_token(client: TestClient, filled: Project) -> None:
    mid = memory_id(filled, "Parser line numbers")
    before = Path(filled.get(mid)["markdown_path"]).read_bytes()
    for data, headers in (({}, {}), ({"token": "guess"}, {}), ({}, {"x-ocm-token": "guess"}),
                          ({"token": TOKEN.upper()}, {})):
        response = client.post(f"/note/{mid}/forget", data={**data, "delete": "1",
                                                            "confirm": "yes"},
                               headers=headers)
        assert response.status_code == 403
        assert "token" in response.text
    assert Path(filled.get(mid)["markdown_path"]).read_bytes() == before
    # GET never changes anything, whatever it names.
    assert client.get(f"/note/{mid}/forget").status_code == 405
    assert Path(filled.get(mid)["markdown_path"]).read_bytes() == before
    # The header carries it too (the page's script could use it).
    ok = client.post(f"/note/{mid}/verify", headers={"x-ocm-token": TOKEN})
    assert ok.status_code == 200


def test_each_run_has_its_own_token(filled: Project) -> None:
    one, two = build(filled, PORT), build(filled, PORT)
    with TestClient(one, base_url=BASE) as a, TestClient(two, base_url=BASE) as b:
        token_a = re.search(r'name="token" value="([^"]+)"', a.get(
            f"/note/{memory_id(filled, 'Parser line numbers')}").text).group(1)
        token_b = re.search(r'name="token" value="([^"]+)"', b.get(
            f"/note/{memory_id(filled, 'Parser line numbers')}").text).group(1)
        assert token_a != token_b and len(token_a) >= 24
        mid = memory_id(filled, "Parser line numbers")
        assert b.post(f"/note/{mid}/archive", data={"token": token_a}).status_code == 403
        assert a.post(f"/note/{mid}/archive", data={"token": token_a}).status_code == 200


def test_a_huge_body_is_refused_unread(client: TestClient, filled: Project) -> None:
    mid = memory_id(filled, "Parser line numbers")
    response = client.post(f"/note/{mid}/tags", data={"token": TOKEN, "tags": "x" * 100_000})
    assert response.status_code == 413
    assert filled.get(mid)["frontmatter"].get("tags") in (None, [])


def test_security_headers(client: TestClient) -> None:
    headers = client.get("/").headers
    assert "script-src 'self'" in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"


def test_note_text_stays_text(client: TestClient, filled: Project) -> None:
    """A `<script>` in a title or body is escaped everywhere it is shown; Markdown still
    renders (raw HTML off, not all formatting off)."""
    mid = memory_id(filled, f"Hostile {HOSTILE}")
    pages = [client.get(f"/note/{mid}").text, client.get("/memories").text,
             client.get("/search", params={"q": "pasted hostile"}).text,
             client.get("/brief").text]
    for html in pages:
        assert "<script>alert" not in html
        assert "<img src=x" not in html and "<img src=\"x\"" not in html
    note = pages[0]
    assert "&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;" in note or (
        "&lt;script&gt;alert(\"owned\")&lt;/script&gt;" in note)
    assert "<strong>bold</strong>" in note
    assert HOSTILE.split(">")[0].replace("<", "&lt;") in pages[1]
    # The only scripts on any page are the dashboard's own file.
    for html in pages:
        assert re.findall(r"<script[^>]*>", html) == ['<script src="/static/app.js" defer>']


def test_markdown_links_cannot_run_script(filled: Project) -> None:
    from ocm.ui.text import to_html

    html = str(to_html("[click](javascript:alert(1)) [[2026-01-01_10-00_x|the <b>x</b>]]"))
    assert "href=\"javascript" not in html and "<a href=\"javascript" not in html
    assert '<a href="/note/2026-01-01_10-00_x">the &lt;b&gt;x&lt;/b&gt;</a>' in html


def test_binding_is_loopback_only() -> None:
    sock = bind(0)
    try:
        host, port = sock.getsockname()
        assert host == "127.0.0.1" and port > 0
        with pytest.raises(Exception, match="cannot listen"):
            bind(port)
    finally:
        sock.close()
    with pytest.raises(Exception, match="--port must be"):
        bind(70000)


def test_cli_serves_and_prints_the_address(repo: Path, ocm_home: Path) -> None:
    """`ocm ui --no-browser` prints its address and answers there; a taken port is a
    one-line error and exit 1; no vault, the usual message."""
    env = {"OCM_HOME": str(ocm_home), "PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": str(repo)}
    missing = subprocess.run([str(VENV_BIN / "ocm"), "ui", "--no-browser"], cwd=repo, env=env,
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 1 and "ocm init" in missing.stderr
    subprocess.run([str(VENV_BIN / "ocm"), "init"], cwd=repo, env=env, check=True,
                   capture_output=True)
    proc = subprocess.Popen([str(VENV_BIN / "ocm"), "ui", "--no-browser"], cwd=repo, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert found, line
        port = int(found.group(1))
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                         "Connection: close\r\n\r\n".encode())
            reply = b""
            while chunk := conn.recv(65536):
                reply += chunk
        assert reply.startswith(b"HTTP/1.1 200") and b"Sessions" in reply
        taken = subprocess.run([str(VENV_BIN / "ocm"), "ui", "--no-browser", "--port",
                                str(port)], cwd=repo, env=env, capture_output=True,
                               text=True, timeout=60)
        assert taken.returncode == 1
        assert f"cannot listen on 127.0.0.1:{port}" in taken.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# -- pages ----------------------------------------------------------------------------------

def test_timeline_groups_sessions_by_day_and_tool(client: TestClient) -> None:
    html = client.get("/").text
    assert "Fix the 429 retry loop in the fetcher" in html
    assert "Cursor session on the parser" in html
    assert "add jitter to backoff" in html and "src/fetch.py" in html
    assert ">claude-code<" in html and ">cursor<" in html
    only = client.get("/", params={"tool": "cursor"}).text
    assert "Cursor session on the parser" in only and "429 retry" not in only
    assert client.get("/", params={"status": "nope"}).status_code == 400
    assert client.get("/", params={"tool": "no-such-tool"}).status_code == 400


def test_timeline_pages(project: Project, repo: Path) -> None:
    for n in range(55):
        sid = project.start_session("codex", slug=f"task-{n}").id
        project.checkpoint(CheckpointInput(goal=f"goal number {n:02d}"), session_id=sid)
    with TestClient(build(project, PORT, TOKEN), base_url=BASE) as c:
        first = c.get("/").text
        assert "1–50 of 55" in first and 'rel="next"' in first
        second = c.get("/", params={"offset": 50}).text
        shown = set(re.findall(r"goal number (\d\d)", first))
        later = set(re.findall(r"goal number (\d\d)", second))
        assert len(shown) == 50 and len(later) == 5 and not shown & later
        assert c.get("/", params={"offset": "-1"}).status_code == 400
        assert c.get("/", params={"offset": "x"}).status_code == 400


def test_session_opens_as_its_rendered_note(client: TestClient, filled: Project) -> None:
    sid = filled.list_sessions(tool="claude-code")[0].id
    html = client.get(f"/note/{sid}").text
    assert "<h2>" in html and "Fix the 429 retry loop" in html
    assert "add jitter to backoff" in html
    missing = client.get("/note/2020-01-01_00-00_nothing")
    assert missing.status_code == 404 and "no session or memory" in missing.text
    assert client.get("/note/..%2F..%2Fetc").status_code in (400, 404)


def test_memories_by_type_status_with_chain_and_stale(client: TestClient, filled: Project,
                                                     repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "parser.py").write_text("print('changed')\n")
    git(repo, "add", "src/parser.py")
    git(repo, "commit", "-q", "-m", "change the parser")
    html = client.get("/memories", params={"status": "any"}).text
    assert "Retry delay" in html and "superseded" in html and "Parser line numbers" in html
    assert "importance 7" in html and "stale: src/parser.py" in html
    assert "xss" in html
    active = client.get("/memories").text
    assert active.count('class="memory"') == 3  # the superseded one is not active
    gotchas = client.get("/memories", params={"type": "gotcha", "status": "any"}).text
    assert gotchas.count('class="memory"') == 1
    assert client.get("/memories", params={"status": "bogus"}).status_code == 400
    old = memory_id(filled, "Retry delay", status="superseded")
    chain = client.get(f"/note/{old}").text
    assert 'class="chain"' in chain and "the fixed sleep hammered the API" in chain
    assert chain.index("Retries use a fixed") > 0


def test_brief_is_what_the_hook_injects(client: TestClient, filled: Project) -> None:
    html = client.get("/brief").text
    assert "Parser line numbers" in html  # conventions are pinned in every brief
    assert "Fix the 429 retry loop" in html or "Cursor session" in html
    # Kept until a note changes, then built again.
    filled.remember("Never log tokens.", "convention", title="No tokens in logs")
    ui = client.app.app.state.dashboard  # type: ignore[attr-defined]
    ui.feed.poll()
    assert "No tokens in logs" in client.get("/brief").text


def test_search_shows_section_snippet_and_explanation(client: TestClient) -> None:
    html = client.get("/search", params={"q": "exponential backoff jitter",
                                         "explain": "1"}).text
    assert "Retry delay" in html and "explanation" in html and "bm25f" in html
    assert "Filters: " in html
    by_kind = client.get("/search", params={"q": "parser", "kind": "session"}).text
    assert "Cursor session on the parser" in by_kind and "Parser line numbers" not in by_kind
    assert client.get("/search", params={"q": "x", "kind": "bogus"}).status_code == 400
    assert client.get("/search", params={"q": "x", "since": "not a date"}).status_code == 400
    empty = client.get("/search", params={"q": "zzqqxx unfindable"}).text
    assert "Nothing found" in empty


def test_search_shows_what_matched_and_how_sure(filled: Project, client: TestClient) -> None:
    from ocm.ui.app import _why

    hit = filled.search("backoff jitter")[0]
    shown = _why(hit)
    assert "snippet" in shown
    assert hit.matched in ("words", "meaning", "both") and shown["matched"] == hit.matched
    assert hit.confidence is not None and 0 <= hit.confidence <= 1
    assert shown["confidence"] == f"{hit.confidence:.2f}"
    html = client.get("/search", params={"q": "backoff jitter"}).text
    assert f"matched: {hit.matched}" in html and f"confidence: {shown['confidence']}" in html


def test_activity_pictures(client: TestClient) -> None:
    html = client.get("/activity").text
    assert html.count("<svg") == 4
    assert "Sessions per day, by tool" in html and "claude-code" in html
    assert "decision superseded: 1" in html and "principle active: 1" in html


# -- actions --------------------------------------------------------------------------------

def post(c: TestClient, mid: str, action: str, **data: str):
    return c.post(f"/note/{mid}/{action}", data={"token": TOKEN, **data})


def test_actions_change_the_note_through_the_facade(client: TestClient,
                                                    filled: Project) -> None:
    mid = memory_id(filled, "Parser line numbers")
    r = post(client, mid, "resolve", reason="done in v2")
    assert r.status_code == 200 and ">resolved<" in r.text
    assert filled.get(mid)["frontmatter"]["status"] == "resolved"
    r = post(client, mid, "reactivate")
    assert filled.get(mid)["frontmatter"]["status"] == "active"
    post(client, mid, "archive")
    assert filled.get(mid)["frontmatter"]["status"] == "archived"
    post(client, mid, "reactivate")
    r = post(client, mid, "tags", tags="parser, lines ,")
    assert filled.get(mid)["frontmatter"]["tags"] == ["parser", "lines"]
    r = post(client, mid, "importance", importance="9")
    assert filled.get(mid)["frontmatter"]["importance"] == 9
    r = post(client, mid, "verify")
    assert r.status_code == 200
    bad = post(client, mid, "importance", importance="eleven")
    assert bad.status_code == 400 and "importance" in bad.text
    bad = post(client, mid, "importance", importance="99")
    assert bad.status_code == 400
    assert filled.get(mid)["frontmatter"]["importance"] == 9
    assert post(client, mid, "explode").status_code == 400
    sid = filled.list_sessions()[0].id
    assert post(client, sid, "archive").status_code == 400  # a session is not a memory


def test_forget_asks_before_deleting(client: TestClient, filled: Project) -> None:
    mid = memory_id(filled, "Parser line numbers")
    path = Path(filled.get(mid)["markdown_path"])
    asked = post(client, mid, "forget", delete="1")
    assert asked.status_code == 200 and "Delete this memory" in asked.text
    assert path.exists()
    done = post(client, mid, "forget", delete="1", confirm="yes")
    assert done.status_code == 200 and "deleted" in done.text
    assert not path.exists()
    assert client.get(f"/note/{mid}").status_code == 404


def test_the_live_feed_reports_written_and_edited_notes(filled: Project) -> None:
    from ocm.ui.live import Feed

    feed = Feed(lambda fn: fn(), filled.note_changes)
    assert feed.poll() == []  # the first look only starts watching
    written = filled.remember("Written by an agent meanwhile.", "gotcha", title="Meanwhile")
    changed = feed.poll()
    assert any(written.id in rel for rel in changed)
    path = Path(filled.get(written.id)["markdown_path"])
    path.write_text(path.read_text() + "\nEdited in an editor.\n")
    assert feed.poll() == [path.relative_to(filled.vault.root.resolve()).as_posix()]
    assert feed.poll() == []


def test_the_dashboard_goes_through_the_facade() -> None:
    """ocm/ui reads and acts through `Project` only: nothing of the indexer, nothing of the
    vault but its error types and the link-text helper."""
    import ocm

    from .test_layers import PACKAGE, imported_modules

    allowed = ("ocm.ui", "ocm.project", "ocm.vault.errors", "ocm.vault.links",
               "ocm.agents.brief", "ocm.agents.base", "ocm.cli.searching")
    found = {name for path in (PACKAGE / "ui").rglob("*.py")
             for name in imported_modules(path, PACKAGE)}
    assert "ocm.project" in found
    assert sorted(n for n in found if not n.startswith(allowed)) == []
    assert Path(ocm.__file__).parent == PACKAGE


def test_package_data_names_every_template_and_static_file() -> None:
    """The wheel carries what pyproject's package-data names (checked by building one: see
    the README); every page and static file must match one of its patterns."""
    import fnmatch
    import tomllib

    root = Path(__file__).resolve().parents[1]
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["ocm.ui"]
    ui = root / "ocm" / "ui"
    shipped = [p.relative_to(ui).as_posix() for p in ui.rglob("*")
               if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".py"]
    assert len(shipped) >= 13
    assert [f for f in shipped if not any(fnmatch.fnmatch(f, pat) for pat in patterns)] == []


def test_every_page_answers_on_an_empty_vault(project: Project) -> None:
    with TestClient(build(project, PORT, TOKEN), base_url=BASE) as c:
        for path in ("/", "/memories", "/brief", "/search?q=anything", "/activity"):
            response = c.get(path)
            assert response.status_code == 200, path
            assert "Internal" not in response.text


def test_a_page_of_a_listing_is_the_listing(filled: Project) -> None:
    """Project.browse (order and count from the index's columns) lists what a search's
    listing does, newest first, and pages through it without gaps or repeats."""
    listed = filled.list_memories(status=None, limit=100)
    page, total = filled.browse("memory", 0, 100)
    assert total == len(listed) == 4
    assert {h.id for h in page} == {h.id for h in listed}
    dates = [h.date for h in page]
    assert dates == sorted(dates, reverse=True)
    pages = [filled.browse("memory", i, 2)[0] for i in (0, 2)]
    assert [h.id for chunk in pages for h in chunk] == [h.id for h in page]
    assert filled.browse("memory", 4, 2) == ([], 4)
    assert filled.browse("memory", 0, 100, status="active")[1] == 3
    assert filled.tally("memory") == {("decision", "active"): 1, ("decision", "superseded"): 1,
                                      ("gotcha", "active"): 1, ("principle", "active"): 1}
    with pytest.raises(Exception, match="unknown kind"):
        filled.browse("nope")
    with pytest.raises(Exception, match="offset"):
        filled.browse("memory", -1)


def test_timeline_shows_transcript_turns(filled: Project, tmp_path: Path) -> None:
    """The turns of a session's transcript note (written by the real fold) show on its card,
    looked up in the index for the page's sessions only."""
    from ocm.vault.transcripts import Turn, fold

    sid = filled.list_sessions(tool="claude-code")[0].id
    source = tmp_path / "host.jsonl"
    source.write_text('{"a": 1}\n{"b": 2}\n{"c": 3}\n')
    turns = [Turn(prompt="fix the retry loop"), Turn(prompt="add jitter"),
             Turn(prompt="run the tests")]
    assert fold(filled.vault.root, sid, sid, "claude-code", "host-1", str(source),
                lambda lines: (turns, len(lines))) is not None
    assert filled.transcript_turns([sid, "2020-01-01_00-00_none"]) == {sid: 3}
    with TestClient(build(filled, PORT, TOKEN), base_url=BASE) as c:
        assert "3 transcript turns" in c.get("/").text


def test_counts_per_day_come_from_the_index(filled: Project) -> None:
    per_day = filled.daily("session", "tool")
    assert sorted(tool for _, tool in per_day) == ["claude-code", "cursor"]
    assert sum(per_day.values()) == 2
    (day, _), *_ = per_day
    assert day == filled.list_sessions()[0].date.date()
    assert sum(filled.daily("memory", "type").values()) == 4
    with pytest.raises(Exception, match="cannot count by"):
        filled.daily("session", "meta")
    sid = filled.list_sessions(tool="cursor")[0].id
    assert [h.tool for h in filled.lookup("session", [sid, "nope"])] == ["cursor"]
