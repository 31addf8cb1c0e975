"""Search on a real Whoosh index: freshness, filters, ranking rules, damage recovery."""

from __future__ import annotations

import os
import shutil
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from ocm.project import Project, SearchRequest
from ocm.vault.errors import InvalidInput
from ocm.vault.sessions import CheckpointInput, PlanFile

NOW = datetime(2026, 11, 20, 18, 0)


@pytest.fixture
def seeded(project: Project) -> Project:
    v = project.vault
    s1 = v.create_session("cursor", started_at=NOW - timedelta(days=2))
    v.checkpoint(s1.id, CheckpointInput(
        goal="Migrate the BGE-M3 embedding endpoint from vLLM to TEI",
        work_completed=["Replaced vLLM client in src/inference/embedding_server.py"],
        decisions=["**TEI over Infinity:** native BGE-M3 support"],
        plan_files=[PlanFile("docs/plans/tei-migration.md", "## TEI Migration Plan")]))
    v.record_file(s1.id, "src/inference/embedding_server.py", "modified")
    s2 = v.create_session("claude-code", started_at=NOW - timedelta(days=40))
    v.checkpoint(s2.id, CheckpointInput(
        goal="Add rate limiting to the public API with a token bucket",
        work_completed=["RateLimiterCheck middleware in src/api/limits.py"],
        work_summary=["Redis INCR with TTL per client key"]))
    v.record_file(s2.id, "src/api/limits.py", "created")
    project.remember("The agent-crew worker must be restarted after a C++ extension rebuild",
                     "gotcha", files=["ext/fastpath.cpp"], created=NOW - timedelta(days=1))
    project.remember("Stripe signature check needs the raw request body", "gotcha",
                     files=["src/payments/webhooks.py"], created=NOW - timedelta(days=200))
    return project


def ids(hits: list) -> list[str]:
    return [h.id for h in hits]


def search(project: Project, query: str, **kw: object) -> list:
    return project.search(SearchRequest(query=query, now=NOW, **kw))


def test_goal_match_ranks_first_and_hits_carry_absolute_paths(seeded: Project) -> None:
    hits = search(seeded, "tei migration embedding latency")
    assert hits[0].kind == "session" and "TEI" in hits[0].title
    data = hits[0].to_json()
    assert set(data) >= {"rank", "score", "id", "kind", "type", "title", "date", "tool",
                         "status", "top_files", "markdown_path"}
    assert data["markdown_path"].startswith("/") and Path(data["markdown_path"]).is_file()
    assert data["top_files"] == ["src/inference/embedding_server.py"]


@pytest.mark.parametrize("query, expect", [
    ("embedding_server", "TEI"), ("embedding_server.py", "TEI"), ("agent-crew", "agent-crew"),
    ("agent crew", "agent-crew"), ("C++ extension", "agent-crew"), ("RateLimiterCheck", "rate"),
    ("src/api/limits.py", "rate"), ("api/limits", "rate"), ("stripe webhook raw body", "Stripe"),
])
def test_identifiers_and_paths_are_findable(seeded: Project, query: str, expect: str) -> None:
    hits = search(seeded, query)
    assert hits, query
    assert expect.lower() in hits[0].title.lower()


def test_no_weak_matches_means_no_results(seeded: Project) -> None:
    assert search(seeded, "kubernetes helm chart quantum") == []
    assert search(seeded, "zzzz qqqq") == []


def test_natural_language_filters(seeded: Project) -> None:
    assert [h.tool for h in search(seeded, "sessions in cursor")] == ["cursor"]
    recent = search(seeded, "what did I do in the past week")
    assert [h.tool for h in recent] == ["cursor"]  # activity words list sessions only
    assert search(seeded, "what did I do last week") == []  # the previous calendar week
    assert [h.tool for h in search(seeded, "my last session")] == ["cursor", "claude-code"]
    assert all(h.tool == "claude-code" for h in search(seeded, "rate limiting claude code session"))


def test_explicit_filters(seeded: Project) -> None:
    assert {h.kind for h in search(seeded, "api", kind="memory")} <= {"memory"}
    assert ids(search(seeded, "restart worker", types=("warning",)))  # alias accepted
    assert search(seeded, "stripe", tool="cursor") == []
    assert len(search(seeded, "", kind="memory", since=NOW - timedelta(days=7))) == 1
    hits = search(seeded, "", file="payments/")
    assert [h.title for h in hits] == ["Stripe signature check needs the raw request body"]
    with pytest.raises(InvalidInput, match="unknown kind"):
        search(seeded, "x", kind="memo")
    with pytest.raises(InvalidInput, match="unknown scope"):
        search(seeded, "x", scope="planet")
    with pytest.raises(InvalidInput, match="limit"):
        search(seeded, "x", limit=0)


def test_decay_prefers_recent_but_never_buries_a_strong_old_match(project: Project,
                                                                 keyword_only: None) -> None:
    # Decay breaks near-ties of the keyword score; with meaning on, the cosine (30 % of the
    # fused score) tells these two notes apart before it.
    old = project.remember("Deploy checklist: drain the queue before migrating", "context",
                           created=NOW - timedelta(days=300))
    new = project.remember("Deploy notes: the queue was slow today", "context",
                           created=NOW - timedelta(days=1))
    hits = search(project, "deploy queue")
    assert ids(hits)[0] == new.id and old.id in ids(hits)
    strong = search(project, "drain the queue before migrating checklist")
    assert ids(strong)[0] == old.id


def test_superseded_is_marked_and_below_its_replacement(project: Project) -> None:
    old = project.remember("Background jobs run on Celery with a Redis broker", "decision",
                           key="jobs", created=NOW - timedelta(days=3))
    new = project.remember("Background jobs moved to arq", "decision", key="jobs",
                           supersede_reason="dropping the broker", created=NOW)
    hits = search(project, "background jobs celery redis broker")
    order = ids(hits)
    assert order.index(new.id) < order.index(old.id)
    marked = next(h for h in hits if h.id == old.id)
    assert marked.status == "superseded" and marked.to_json()["superseded_by"] == new.id


def test_resolved_and_archived_hidden_unless_asked(project: Project) -> None:
    r = project.remember("p99 OOM on A10G under sustained load", "gotcha")
    a = project.remember("OOM notes from the old cluster", "context")
    project.set_memory_status(r.id, "resolved")
    project.forget(a.id)
    assert search(project, "OOM") == []
    shown = ids(search(project, "OOM", include_resolved=True))
    assert set(shown) == {r.id, a.id}
    assert ids(search(project, "OOM", status="resolved")) == [r.id]


def test_explain_shows_field_contributions(seeded: Project) -> None:
    hit = search(seeded, "TEI embedding_server", explain=True)[0]
    fields = hit.explain["fields"]
    assert fields["goal"] > 0 and fields["files"] > 0
    assert "decay" in hit.explain and "bm25f" in hit.explain


def test_writes_by_another_process_and_editor_edits_are_seen(project: Project, run_ocm) -> None:
    assert search(project, "kafka") == []
    run_ocm("remember", "Kafka consumer lag alarms fire at 10k", "--type", "gotcha")
    assert len(search(project, "kafka consumer lag")) == 1
    # An editor rewrites the file keeping its size and even its mtime: the size or content
    # signature still changes, so the next search sees the edit.
    path = Path(search(project, "kafka")[0].path)
    text = path.read_text().replace("Kafka consumer lag alarms fire at 10k",
                                    "Pulsar consumer lag alarms fire at 10k")
    stat = path.stat()
    path.write_text(text)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert search(project, "pulsar")
    path.unlink()
    assert search(project, "pulsar") == []


def test_deleting_or_damaging_the_index_loses_nothing(seeded: Project) -> None:
    expected = ids(search(seeded, "tei embedding"))
    shutil.rmtree(seeded.vault.index_dir)
    assert ids(search(seeded, "tei embedding")) == expected
    for seg in seeded.vault.index_dir.glob("*.seg"):
        seg.write_bytes(b"garbage")
    for toc in seeded.vault.index_dir.glob("*.toc"):
        toc.write_bytes(b"\x00\x01scrambled")
    fresh = Project.open(cwd=seeded.root)
    assert ids(fresh.search(SearchRequest(query="tei embedding", now=NOW))) == expected
    assert any("rebuilt" in n for n in fresh.notices)


def test_one_broken_note_does_not_stop_the_others(seeded: Project) -> None:
    bad = seeded.vault.memories_dir / "gotcha" / "broken.md"
    bad.write_text("---\ntitle: [unclosed\n---\nkafka\n")
    (seeded.vault.memories_dir / "gotcha" / "latin1.md").write_bytes(b"---\nid: x\n---\ncaf\xe9")
    assert search(seeded, "stripe raw body")
    status = seeded.status()
    assert "memories/gotcha/broken.md" in status["broken_notes"]
    assert "not UTF-8" in status["broken_notes"]["memories/gotcha/latin1.md"]
    bad.write_text("---\ntitle: fixed\n---\nkafka lag\n")
    assert search(seeded, "kafka lag")


def test_temp_files_and_dot_folders_are_not_notes(project: Project) -> None:
    (project.vault.memories_dir / "gotcha").mkdir(parents=True, exist_ok=True)
    (project.vault.memories_dir / "gotcha" / ".ocm-tmp-1-x.md").write_text("---\n---\nghost\n")
    (project.vault.root / "sessions" / ".obsidian").mkdir(parents=True)
    (project.vault.root / "sessions" / ".obsidian" / "n.md").write_text("ghost\n")
    assert search(project, "ghost") == []


def test_project_search_never_returns_another_projects_notes(
        project: Project, tmp_path: Path) -> None:
    from .conftest import make_repo

    other = Project.open(cwd=make_repo(tmp_path / "other"))
    other.init()
    other.remember("Secret sauce of the other project: flux capacitor", "discovery")
    project.remember("Our own flux notes", "discovery")
    mine = search(project, "flux capacitor")
    assert [h.project for h in mine] == ["proj"]
    everywhere = search(project, "flux capacitor", scope="global")
    assert {h.project for h in everywhere} == {"proj", "other"}
    project.remember("I prefer flux diagrams", "preference", scope="user")
    assert {h.scope for h in search(project, "flux", scope="user")} == {"user"}
    assert "user" in {h.scope for h in search(project, "flux")}


def test_lost_index_is_announced_and_stale_temp_files_are_swept(project: Project) -> None:
    project.remember("Kafka consumer lag alarms fire at 10k", "gotcha")
    shutil.rmtree(project.vault.index_dir)
    fresh = Project.open(cwd=project.root)
    assert fresh.search(SearchRequest(query="kafka lag", now=NOW))
    assert fresh.notices == ["ocm: search index not found; rebuilt it from 1 notes"]
    dead = project.vault.memories_dir / "gotcha" / ".ocm-tmp-999999999-x.md"
    live = project.vault.memories_dir / "gotcha" / f".ocm-tmp-{os.getpid()}-y.md"
    dead.write_text("half a note")
    live.write_text("being written")
    fresh.status()
    assert not dead.exists() and live.exists()
    assert any("removed 1 temp files" in n for n in fresh.notices)


def test_a_live_writers_temp_name_holding_an_old_file_is_not_swept(project: Project) -> None:
    """Regression: after a checked swap the temp name holds the note's old file; its mtime is
    as old as the note's last save, and a sweep that judged by mtime alone removed it while
    its writer was still comparing it (the writer then failed naming the temp file)."""
    old = project.vault.memories_dir / "gotcha" / "old.md"
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_text("the note as it was an hour ago")
    an_hour_ago = time.time() - 3600
    os.utime(old, (an_hour_ago, an_hour_ago))
    swapped = old.with_name(f".ocm-tmp-{os.getpid()}-z-old.md")
    os.rename(old, swapped)  # what the swap does: the old file now sits at the temp name
    assert project.sweep_temp_files() == 0
    assert swapped.exists()


def test_a_unique_word_deep_in_a_long_note_is_found(project: Project) -> None:
    filler = " ".join(f"word{i} alpha beta gamma" for i in range(800))
    project.remember(f"{filler} zanzibarite {filler}", "context", title="Long notes")
    assert ids(search(project, "zanzibarite"))


def test_query_wording_sets_kind_and_type_priors() -> None:
    from ocm.indexer import search as engine

    # A question for a kind of record discounts sessions even when worded as work done.
    why = engine.intent_priors("why did we drop celery")
    assert why["decision"] > 1.0 and why["session"] == engine.KNOWLEDGE_SESSION
    assert engine.intent_priors("gotchas in src/db/session.py")["session"] < 1.0
    # A symptom asks for what fixed it.
    assert engine.intent_priors("checkout slow under load")["bug_fix"] > 1.0
    # Resuming asks for recent sessions; pasted paragraphs never set that.
    assert engine.RECENT in engine.intent_priors("where was I with the cart refactor")
    long = "please continue " + "word " * 30
    assert engine.RECENT not in engine.intent_priors(long)
    # Work done keeps sessions at full weight; a plain question discounts them a little.
    assert "session" not in engine.intent_priors("what did I change in the cart")
    assert engine.intent_priors("cart total")["session"] == engine.SESSION_NARRATIVE


def test_importance_breaks_near_ties(project: Project) -> None:
    low = project.remember("Release checklist lives in the wiki", "context", importance=3,
                           created=NOW)
    high = project.remember("Release checklist lives in the repo", "context", importance=8,
                            created=NOW)
    assert ids(search(project, "release checklist"))[:2] == [high.id, low.id]


def test_superseded_goes_last_when_its_replacements_replacement_is_listed() -> None:
    from ocm.indexer import search as engine
    from ocm.indexer.hits import Hit

    def hit(id_: str, status: str, score: float, **meta: str) -> Hit:
        return Hit(id=id_, kind="memory", type="decision", title=id_, status=status, tool="",
                   scope="project", date=NOW, path=Path(id_), meta=dict(meta), score=score)

    # pool-20 -> pool-30 (not found) -> pgbouncer (found): pool-20 is history.
    old = hit("pool-20", "superseded", 9.0, superseded_by="pool-30")
    other = hit("session-setup", "active", 8.0)
    newest = hit("pgbouncer", "active", 5.0, supersedes="pool-30")
    lone = hit("lone-old", "superseded", 7.0, superseded_by="not-found")
    order = [h.id for h in engine._replacements_first([old, other, lone, newest])]
    assert order == ["session-setup", "lone-old", "pgbouncer", "pool-20"]


@pytest.fixture
def code_notes(project: Project) -> Project:
    for n, name in enumerate(("utils", "models", "views", "tasks", "serializers", "admin")):
        project.remember(f"Helpers for {name} live in app/{name}.py, step 1 of {n + 2}",
                         "context", created=NOW - timedelta(days=n))
    project.remember("Retries use exponential backoff with jitter", "decision",
                     created=NOW - timedelta(days=9))
    return project


def test_notes_sharing_only_a_common_part_of_the_query_are_weak(code_notes: Project) -> None:
    # `backoff.py` shares only `py` with six notes, `Q1 migration` only `1`: not results.
    assert [h.title for h in search(code_notes, "backoff.py")] == [
        "Retries use exponential backoff with jitter"]
    assert search(code_notes, "Q1 migration") == []
    assert search(code_notes, "quantum.py") == []
    # The word itself still finds its note; so does one word of two when it is the rare one.
    assert [h.title for h in search(code_notes, "backoff")] == [
        "Retries use exponential backoff with jitter"]
    assert len(search(code_notes, "jitter quantum")) == 1


@pytest.mark.parametrize("query", ["the and of a", "how do I", "of", "?!"])
def test_queries_without_a_searchable_word_return_nothing(code_notes: Project,
                                                         query: str) -> None:
    assert search(code_notes, query) == []


def test_an_empty_query_lists_newest_first_as_documented(code_notes: Project) -> None:
    hits = search(code_notes, "", limit=3)
    assert [h.title for h in hits][0].endswith("step 1 of 2")
    assert [h.rank for h in hits] == [1, 2, 3]


def test_explain_reports_the_coverage_of_the_query(code_notes: Project) -> None:
    hit = search(code_notes, "exponential backoff", explain=True)[0]
    assert hit.explain["coverage"] == 1.0


def test_mmr_picks_as_comparing_every_hit_with_every_pick() -> None:
    """The lazy MMR (overlaps measured only when a hit comes to the top) picks the same
    hits in the same order as the plain loop over the whole pool, ties and all."""
    import random
    from types import SimpleNamespace

    from ocm.indexer import search as engine

    def plain(hits: list, limit: int) -> list:
        top = hits[0].score or 1.0
        chosen, pool, overlap = [], list(hits), [0.0] * len(hits)
        while pool and len(chosen) < limit:
            at = max(range(len(pool)), key=lambda i: (
                engine.MMR_LAMBDA * pool[i].score / top
                - (1 - engine.MMR_LAMBDA) * overlap[i], -i))
            pick = pool.pop(at)
            overlap.pop(at)
            chosen.append(pick)
            for i, hit in enumerate(pool):
                overlap[i] = max(overlap[i], engine.jaccard(hit.sketch, pick.sketch))
        return chosen

    rng = random.Random(5)
    words = [f"w{n}" for n in range(30)]
    reordered = 0
    for _ in range(300):
        hits = [SimpleNamespace(score=rng.choice([1.0, 2.0, 2.5, rng.uniform(0, 3)]),
                                sketch=frozenset(rng.sample(words, rng.randint(0, 8))))
                for _ in range(rng.randint(2, 40))]
        hits.sort(key=lambda h: -h.score)
        limit = rng.randint(1, 12)
        expected = plain(hits, limit)
        assert engine._mmr(hits, limit) == expected
        reordered += expected != hits[:limit]
    assert reordered > 50  # diversity did change the order, and the same way
