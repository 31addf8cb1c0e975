"""`ocm ui` in a real browser: headless Debian chromium driven by Playwright, against the
real `ocm ui` process serving a vault made by the real CLI and the installed Claude Code
hooks. Every page loads without console errors (a CSP violation is one), search finds, an
action changes the note on disk, a note written meanwhile appears without a reload, and the
hostile note stays text. Screenshots go to OCM_UI_SHOTS (default: the test's temp folder).

Run by `make e2e` (tests_e2e/ui_run.py sets OCM_E2E_BROWSER=1 and installs what it needs);
skipped elsewhere."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "hooks"))
import harness as h  # noqa: E402

if os.environ.get("OCM_E2E_BROWSER") != "1":
    pytest.skip("the browser tests run from `make e2e` (tests_e2e/ui_run.py)",
                allow_module_level=True)

from playwright.sync_api import Browser, Page, sync_playwright  # noqa: E402

CHROMIUM = os.environ.get("OCM_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
HOSTILE_TITLE = "Pasted <script>window.__pwned=1</script> markup"
HOSTILE_BODY = ('Someone pasted <script>window.__pwned=2</script> and '
                '<img src=x onerror="window.__pwned=3"> into a note; **bold** still renders.')
SID = "e2e-ui-claude-session-0001"


@dataclass
class Served:
    repo: Path
    env: dict[str, str]
    url: str
    proc: subprocess.Popen
    shots: Path
    errors: list[str] = field(default_factory=list)

    def ocm(self, *args: str) -> subprocess.CompletedProcess:
        out = h.ocm(list(args), self.env, self.repo)
        assert out.returncode == 0, out.stderr
        return out

    def memory(self, title: str) -> dict[str, Any]:
        hits = json.loads(self.ocm("search", title, "--json", "--kind", "memory",
                                   "--include-resolved").stdout)
        return next(hit for hit in hits if hit["title"] == title)


def _make_vault(tmp: Path) -> tuple[Path, dict[str, str]]:
    """A project whose vault the real CLI and the installed hooks wrote."""
    env = h.clean_env(tmp / "ocm-home", HOME=str(tmp / "home"))
    repo = h.make_repo(tmp / "proj")
    init = h.ocm(["init", "--agents", "all"], env, repo)
    assert init.returncode == 0, init.stderr
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    commands = {event: groups[0]["hooks"][0]["command"]
                for event, groups in settings["hooks"].items()}

    def fire(event: str, fixture: str) -> None:
        out = h.run_hook([], h.payload("claude-code", fixture, repo, SID), env, cwd=repo,
                         command=commands[event])
        assert out.returncode == 0, out.stderr

    fire("SessionStart", "session-start")
    fire("UserPromptSubmit", "user-prompt-submit")
    (repo / "src").mkdir()
    (repo / "src" / "backoff.py").write_text("def backoff(n):\n    return 2 ** n\n")
    fire("PostToolUse", "post-tool-use-write")
    for args in (
        ["checkpoint", "--session", SID, "--goal", "Add exponential backoff to the client.",
         "--done", "Wrote src/backoff.py", "--pending", "Wire backoff into the HTTP client"],
        ["remember", "The API returns 429 under burst load; retry with jitter.", "--type",
         "gotcha", "--title", "API rate-limits bursts", "--file", "src/backoff.py"],
        ["remember", "Retries sleep a fixed 2 s.", "--type", "decision", "--title",
         "Retry delay", "--key", "retry-delay"],
        ["remember", "Retries back off exponentially, capped at 30 s.", "--type", "decision",
         "--title", "Retry delay", "--key", "retry-delay", "--supersede-reason",
         "the fixed sleep hammered the API"],
        ["remember", "Line numbers are 1-based everywhere.", "--type", "convention",
         "--title", "Line numbers", "--importance", "6"],
        ["remember", HOSTILE_BODY, "--type", "gotcha", "--title", HOSTILE_TITLE],
        ["checkpoint", "--tool", "cursor", "--goal", "Tidy the parser's error messages.",
         "--pending", "Add a test for empty input", "--status", "closed"],
    ):
        out = h.ocm(args, env, repo)
        assert out.returncode == 0, (args, out.stderr)
    fire("Stop", "stop")
    fire("SessionEnd", "session-end")
    return repo, env


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("ui")
    repo, env = _make_vault(tmp)
    proc = subprocess.Popen([h.OCM, "ui", "--no-browser"], cwd=repo, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()  # type: ignore[union-attr]
    found = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
    assert found, (line, proc.stderr.read() if proc.poll() is not None else "")  # type: ignore[union-attr]
    shots = Path(os.environ.get("OCM_UI_SHOTS") or tmp / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    try:
        yield Served(repo, env, found.group(1), proc, shots)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser, served: Served) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    tab = context.new_page()
    served.errors.clear()
    tab.on("console", lambda msg: msg.type == "error" and served.errors.append(msg.text))
    tab.on("pageerror", lambda exc: served.errors.append(str(exc)))
    yield tab
    context.close()


def test_every_page_loads_without_console_errors(page: Page, served: Served) -> None:
    memory = served.memory("API rate-limits bursts")
    session = next(s for s in json.loads(served.ocm("list", "--json").stdout)
                   if s["tool"] == "claude-code")
    pages = {"timeline": ("/", "Add exponential backoff to the client."),
             "memories": ("/memories", "API rate-limits bursts"),
             "brief": ("/brief", "Line numbers"),
             "search": ("/search?q=backoff&explain=1", "explanation"),
             "activity": ("/activity", "Sessions per day, by tool"),
             "session": (f"/note/{session['id']}", "Wire backoff into the HTTP client"),
             "memory": (f"/note/{memory['id']}", "Actions")}
    for name, (path, expected) in pages.items():
        response = page.goto(served.url + path)
        assert response is not None and response.status == 200, name
        page.wait_for_load_state("networkidle")
        assert expected in page.inner_text("main"), name
        page.screenshot(path=str(served.shots / f"ui-{name}.png"), full_page=name != "session")
    assert served.errors == []
    old = served.memory("Retry delay")  # the newest; its chain shows the one it replaced
    page.goto(served.url + f"/note/{old['id']}")
    chain = page.locator("ol.chain li")
    assert chain.count() == 2 and "the fixed sleep hammered the API" in page.inner_text("main")


def test_search_finds(page: Page, served: Served) -> None:
    page.goto(served.url + "/search")
    page.fill("input[name=q]", "burst load jitter")
    page.press("input[name=q]", "Enter")
    page.wait_for_selector("li.hit")
    first = page.locator("li.hit").first
    assert "API rate-limits bursts" in first.inner_text()
    assert served.errors == []


def test_an_action_changes_the_note_on_disk(page: Page, served: Served) -> None:
    memory = served.memory("Line numbers")
    path = Path(memory["markdown_path"])
    page.goto(served.url + f"/note/{memory['id']}")
    page.fill("#importance", "9")
    page.click("#do-importance")
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(served.shots / "ui-action.png"))
    page.wait_for_selector("h1.result")
    assert "importance: 9" in path.read_text()
    page.goto(served.url + f"/note/{memory['id']}")
    page.click("#do-delete")
    page.wait_for_selector("#confirm-delete")
    assert path.exists()  # asked first
    page.click("#confirm-delete")
    page.wait_for_selector("h1.result")
    assert not path.exists()
    assert served.errors == []


def test_a_note_written_meanwhile_appears_live(page: Page, served: Served) -> None:
    page.goto(served.url + "/memories")
    page.wait_for_load_state("networkidle")
    page.evaluate("window.__sameDocument = 'yes'")
    time.sleep(1.0)  # the feed's first look has run; the page is listening
    served.ocm("remember", "Written by an agent while the page was open.", "--type",
               "gotcha", "--title", "Arrived live")
    page.wait_for_selector("text=Arrived live", timeout=15_000)
    # An editor's save of an existing note shows too.
    memory = served.memory("API rate-limits bursts")
    path = Path(memory["markdown_path"])
    path.write_text(path.read_text().replace("title: API rate-limits bursts",
                                             "title: API rate-limits bursts hard"))
    page.wait_for_selector("text=API rate-limits bursts hard", timeout=15_000)
    assert page.evaluate("window.__sameDocument") == "yes"  # no reload happened
    page.screenshot(path=str(served.shots / "ui-live.png"))
    assert served.errors == []


def test_the_hostile_note_stays_text(page: Page, served: Served) -> None:
    memory = served.memory(HOSTILE_TITLE)
    for path in (f"/note/{memory['id']}", "/memories", "/search?q=pasted+markup"):
        page.goto(served.url + path)
        page.wait_for_load_state("networkidle")
        assert page.evaluate("typeof window.__pwned") == "undefined", path
        assert "<script>window.__pwned=" in page.inner_text("main"), path
        assert page.locator("main script, main img").count() == 0, path
    page.goto(served.url + f"/note/{memory['id']}")
    assert page.locator("article.note-body strong", has_text="bold").count() == 1
    assert served.errors == []
