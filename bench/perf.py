"""Speed of ocm on a synthetic vault: build, search, freshness, writes, CLI and hook start-up.

    python bench/perf.py --notes 10000 [--json] [--keep DIR] [--seed 7]

Generates a deterministic vault (stdlib `random` with a seed) in the formats `ocm checkpoint`
and `ocm remember` write: ~80 % session notes in `sessions/`, ~20 % memory records in
`memories/<type>/`, 0.5-5 KB each, technical vocabulary drawn from Zipf-weighted topics plus a
long tail of identifiers, paths and ticket ids; file mtimes follow each note's dates. Then it
measures, each as a median of repeated runs in this one invocation:

  build_notes_per_s   full index build through the facade (`Project.rebuild_index`)
  search_p50_ms/p95   200 realistic 2-5 word queries, warm, in process, `Project.search`
  cli_search_ms       a fresh `ocm search --json` process, end to end
  noop_refresh_ms     `Project.refresh` with nothing changed (the freshness check)
  incremental_10_ms   10 notes rewritten on disk, then one `Project.search`
  checkpoint_ms       `Project.checkpoint` of the open session
  remember_ms         `Project.remember` of a new gotcha
  hook_ms             a fresh `ocm-hook claude-code post-tool-use` with an Edit payload
  python_pass_ms      `python -c pass` with the venv's interpreter (the process floor)
  index_mb            size of the index folder

`--json` prints one object with exactly those keys plus `notes`. Speed is reported, never
asserted: see bench/README.md for the figures at 1k / 10k / 50k.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

KEYS = ("notes", "build_notes_per_s", "search_p50_ms", "search_p95_ms", "cli_search_ms",
        "noop_refresh_ms", "incremental_10_ms", "checkpoint_ms", "remember_ms", "hook_ms",
        "python_pass_ms", "index_mb")
QUERIES = 200
EPOCH = datetime(2024, 11, 1, 9, 0)
SPAN_DAYS = 730
# In --keep DIR: the notes generated there, one vault-relative path a line (--reuse reads it).
GENERATED = "generated-notes.txt"

# --------------------------------------------------------------------------- vocabulary

TOPICS: dict[str, list[str]] = {
    "auth": ["jwt", "refresh", "token", "oauth", "session", "cookie", "httponly", "login",
             "password", "bcrypt", "csrf", "sso", "saml", "middleware", "permissions", "rbac",
             "expiry", "revocation", "keycloak", "mfa"],
    "db": ["postgres", "migration", "alembic", "index", "query", "transaction", "deadlock",
           "sqlalchemy", "asyncpg", "pool", "vacuum", "replica", "schema", "enum", "foreign",
           "constraint", "selectinload", "n+1", "explain", "partition"],
    "search": ["whoosh", "bm25", "tokenizer", "analyzer", "stemming", "ranking", "relevance",
               "embedding", "vector", "faiss", "reranker", "recall", "precision", "snippet",
               "highlight", "synonyms", "facets", "elasticsearch", "opensearch", "index"],
    "frontend": ["react", "redux", "hooks", "component", "typescript", "vite", "tailwind",
                 "hydration", "ssr", "nextjs", "bundle", "lazy", "suspense", "form",
                 "validation", "zod", "storybook", "css", "accessibility", "router"],
    "ci": ["github", "actions", "workflow", "cache", "pytest", "coverage", "lint", "ruff",
           "mypy", "matrix", "artifact", "flaky", "xdist", "pre-commit", "runner", "docker",
           "buildx", "release", "tag", "semver"],
    "k8s": ["kubernetes", "helm", "chart", "deployment", "ingress", "nginx", "pod", "hpa",
            "cronjob", "configmap", "secret", "eks", "node", "probe", "liveness", "readiness",
            "rollout", "namespace", "kubectl", "terraform"],
    "billing": ["stripe", "invoice", "subscription", "webhook", "idempotency", "refund",
                "checkout", "3ds", "payment", "intent", "coupon", "tax", "vat", "proration",
                "ledger", "currency", "charge", "dispute", "customer", "portal"],
    "cache": ["redis", "ttl", "eviction", "lru", "memcached", "invalidation", "stampede",
              "warmup", "pubsub", "lock", "sentinel", "cluster", "pipeline", "serialization",
              "msgpack", "hit", "miss", "prefetch", "cdn", "etag"],
    "queue": ["celery", "arq", "rabbitmq", "kafka", "consumer", "producer", "retry",
              "backoff", "dead-letter", "worker", "broker", "ack", "offset", "partition",
              "scheduler", "beat", "task", "visibility", "timeout", "batch"],
    "observability": ["prometheus", "grafana", "otel", "tracing", "span", "metrics", "alert",
                      "slo", "latency", "p99", "histogram", "logging", "structlog", "sentry",
                      "dashboard", "cardinality", "exporter", "loki", "jaeger", "pagerduty"],
    "api": ["fastapi", "endpoint", "pydantic", "openapi", "pagination", "cursor", "rate",
            "limit", "429", "graphql", "grpc", "versioning", "serializer", "cors", "gzip",
            "streaming", "websocket", "sse", "httpx", "client"],
    "llm": ["prompt", "openai", "anthropic", "gateway", "tokens", "context", "window",
            "streaming", "tool", "agent", "crew", "embedding", "chunking", "rag", "eval",
            "temperature", "retry", "cost", "latency", "guardrails"],
    "perf": ["profiling", "flamegraph", "cprofile", "allocation", "gc", "memory", "leak",
             "benchmark", "throughput", "p95", "hotspot", "vectorize", "numpy", "async",
             "threadpool", "gil", "uvloop", "orjson", "mmap", "zero-copy"],
    "testing": ["fixture", "mock", "hypothesis", "property", "snapshot", "factory", "faker",
                "integration", "e2e", "playwright", "testcontainers", "conftest", "parametrize",
                "monkeypatch", "freezegun", "golden", "regression", "tox", "nox", "assert"],
    "security": ["secret", "vault", "kms", "encryption", "tls", "certificate", "rotation",
                 "audit", "sast", "dependabot", "cve", "sbom", "sandbox", "seccomp", "xss",
                 "sqli", "ssrf", "redaction", "pii", "gdpr"],
    "mobile": ["ios", "android", "swift", "kotlin", "push", "notification", "deeplink",
               "expo", "testflight", "crashlytics", "offline", "sync", "sqlite", "keychain",
               "biometric", "bundle", "fastlane", "gradle", "xcode", "release"],
}
_GENERAL_WORDS = (
    "fix update add remove refactor rename move split merge clean handle support "
    "improve check validate parse load save read write retry fallback default config "
    "setting error failure bug issue crash slow fast timeout edge case test tests "
    "docs readme service module function class method field value request response "
    "data file path user team prod staging local dev env build deploy release version "
    "upgrade dependency package script command flag option output input format json "
    "yaml logic flow state cache queue job worker api db schema model view page route "
    "handler helper util wrapper adapter client server backend frontend"
)
GENERAL = tuple(_GENERAL_WORDS.split())
TOOLS = ("claude-code", "cursor", "codex", "gemini", "vscode")
TOOL_WEIGHTS = (5, 3, 2, 1, 1)
MEMORY_TYPES = ("gotcha", "decision", "bug_fix", "discovery", "trade_off", "procedure",
                "principle", "preference", "lesson", "context", "reference")
MEMORY_WEIGHTS = (6, 6, 5, 4, 2, 3, 1, 1, 2, 2, 1)
DIRS = ("src/api", "src/db", "src/core", "src/search", "src/billing", "src/workers", "web/src",
        "web/src/components", "infra/helm", "infra/terraform", "tests", "scripts", "docs")
EXTS = (".py", ".py", ".py", ".ts", ".tsx", ".yaml", ".md", ".sql", ".tf")


class Vocab:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.topics = list(TOPICS)
        self.topic_weights = [1.0 / (i + 1) for i in range(len(self.topics))]  # Zipf
        # Long tail: generated identifiers, shared across notes so IDF is meaningful.
        self.idents = []
        for _ in range(3000):
            a, b = rng.choice(GENERAL), rng.choice(sum(TOPICS.values(), []))
            b = b.replace("-", "_").replace("+", "")
            self.idents.append(rng.choice((f"{a}_{b}", f"{a.title()}{b.title()}",
                                           f"{b}_{a}", f"{a}{b.title()}Check")))
        self.paths = []
        for _ in range(1500):
            name = rng.choice(self.idents).lower().replace("check", "")
            self.paths.append(f"{rng.choice(DIRS)}/{name}{rng.choice(EXTS)}")

    def topic(self) -> str:
        return self.rng.choices(self.topics, self.topic_weights)[0]

    def word(self, topics: list[str]) -> str:
        r = self.rng.random()
        if r < 0.45:
            return self.rng.choice(TOPICS[self.rng.choice(topics)])
        if r < 0.85:
            return self.rng.choice(GENERAL)
        if r < 0.95:
            return f"`{self.rng.choice(self.idents)}`"
        return self.rng.choice((f"PROJ-{self.rng.randint(100, 4999)}",
                                f"{self.rng.getrandbits(28):07x}", f"v{self.rng.randint(1, 9)}."
                                f"{self.rng.randint(0, 20)}"))

    def sentence(self, topics: list[str], lo: int = 6, hi: int = 16) -> str:
        words = [self.word(topics) for _ in range(self.rng.randint(lo, hi))]
        text = " ".join(words)
        return text[0].upper() + text[1:]

    def slug(self, topics: list[str]) -> str:
        words = [self.rng.choice(TOPICS[self.rng.choice(topics)]) for _ in range(2)]
        words.append(self.rng.choice(GENERAL))
        return "-".join(w.replace("+", "").replace(".", "") for w in words)


def _ts(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%S")


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {i}" for i in items)


def session_text(v: Vocab, note_id: str, tool: str, slug: str, started: datetime,
                 ended: datetime, status: str, topics: list[str], size: int) -> str:
    rng = v.rng
    tags = sorted({rng.choice(topics) for _ in range(rng.randint(1, 3))})
    fm = [f"id: {note_id}", f"agent_session_id: {rng.getrandbits(64):016x}", f"tool: {tool}",
          "project: acme-shop", f"started_at: {_ts(started)}"]
    if status != "open":
        fm.append(f"ended_at: {_ts(ended)}")
    fm += [f"status: {status}", f"trigger: {rng.choice(('manual', 'session_end', 'git_commit'))}",
           f"git_sha_start: {rng.getrandbits(48):012x}", f"slug: {slug}", "tags:"]
    fm += [f"- {t}" for t in tags]
    scale = max(1, size // 900)
    files = {"Created": [], "Modified": [], "Deleted": []}
    for _ in range(rng.randint(1, 3 + 2 * scale)):
        files[rng.choices(list(files), (2, 6, 1))[0]].append(rng.choice(v.paths))
    parts = ["---", *fm, "---", "", "## Goal", v.sentence(topics, 8, 22) + ".", "", "---", "",
             "## Todos", "", "### ✅ Work Completed",
             _bullets([v.sentence(topics) for _ in range(rng.randint(1, 2 + scale))]), "",
             "### 🔲 Work To Be Completed",
             _bullets([v.sentence(topics, 4, 10) for _ in range(rng.randint(0, 1 + scale))]),
             "", "---", "", "## Files Touched", ""]
    for change, paths in files.items():
        if paths:
            parts += [f"### {change}", _bullets([f"`{p}`" for p in dict.fromkeys(paths)]), ""]
    parts += ["---", "", "## Git Diff Summary",
              f"{sum(map(len, files.values()))} files changed, +{rng.randint(5, 900)} / "
              f"-{rng.randint(0, 400)} lines.", "", "---", "", "## Work Done", "",
              _bullets([v.sentence(topics, 8, 24) for _ in range(rng.randint(1, 2 + 2 * scale))]),
              ""]
    if rng.random() < 0.25:
        parts += ["---", "", "## Plan Files", "", "| File | Description |",
                  "|------|-------------|",
                  f"| `docs/plans/{slug}.md` | {v.sentence(topics, 3, 6)} |", ""]
    if rng.random() < 0.6:
        parts += ["---", "", "## Architecture Decisions", "", _bullets([
            f"**{v.sentence(topics, 2, 4)}:** {v.sentence(topics, 8, 20)}"
            for _ in range(rng.randint(1, 1 + scale))]), ""]
    if rng.random() < 0.4:
        parts += ["---", "", "## References", "",
                  f"- [{v.sentence(topics, 2, 5)}](https://docs.example.com/{slug})", ""]
    text = "\n".join(parts)
    while len(text.encode()) < size:  # pad the way real sessions grow: more work done
        text += f"- {v.sentence(topics, 10, 24)}\n"
    return text


def memory_text(v: Vocab, note_id: str, mtype: str, title: str, created: datetime,
                session: str, topics: list[str], size: int) -> str:
    rng = v.rng
    files = sorted({rng.choice(v.paths) for _ in range(rng.randint(0, 3))})
    tags = sorted({rng.choice(topics) for _ in range(rng.randint(1, 3))})
    status = rng.choices(("active", "resolved", "superseded", "archived"), (20, 3, 1, 1))[0]
    fm = [f"id: {note_id}", f"type: {mtype}", f"title: {title}", f"status: {status}",
          "scope: project", f"importance: {rng.randint(3, 9)}"]
    fm += ["files:", *[f"- {f}" for f in files]] if files else ["files: []"]
    fm += ["tags:", *[f"- {t}" for t in tags], f"session: {session}",
           f"origin_type: {rng.choice(('user_stated', 'observed', 'agent_inferred'))}",
           f"created: {_ts(created)}", f"updated: {_ts(created)}",
           f"git_sha: {rng.getrandbits(48):012x}"]
    body = []
    while len("\n".join(body)) + 300 < size:
        body.append(" ".join(v.sentence(topics, 10, 22) + "." for _ in range(rng.randint(1, 3))))
    return "\n".join(["---", *fm, "---", "", "\n\n".join(body) or title, ""])


def generate_vault(vault: Path, notes: int, seed: int = 7) -> dict[str, list[str]]:
    """Write `notes` notes under `vault`; returns the relative paths by kind."""
    rng = random.Random(seed)
    v = Vocab(rng)
    (vault / "sessions").mkdir(parents=True, exist_ok=True)
    out: dict[str, list[str]] = {"session": [], "memory": []}
    n_memories = notes // 5
    n_sessions = notes - n_memories
    step = SPAN_DAYS * 86400 / max(1, n_sessions)
    session_ids: list[str] = []
    for i in range(n_sessions):
        started = EPOCH + timedelta(seconds=int(i * step + rng.random() * step * 0.5))
        ended = started + timedelta(minutes=rng.randint(10, 240))
        tool = rng.choices(TOOLS, TOOL_WEIGHTS)[0]
        topics = [v.topic() for _ in range(rng.choice((1, 1, 2)))]
        slug = v.slug(topics)
        base = f"{started:%Y-%m-%d_%H-%M}_{tool}_{slug}"
        note_id, k = base, 1
        while (vault / "sessions" / f"{note_id}.md").exists():
            k += 1
            note_id = f"{base}-{k}"
        status = "open" if i == n_sessions - 1 else rng.choices(("closed", "frozen"), (9, 1))[0]
        size = int(min(5000, max(500, rng.lognormvariate(7.8, 0.45))))
        path = vault / "sessions" / f"{note_id}.md"
        path.write_text(session_text(v, note_id, tool, slug, started, ended, status, topics,
                                     size), encoding="utf-8")
        stamp = ended.timestamp()
        os.utime(path, (stamp, stamp))
        out["session"].append(f"sessions/{note_id}.md")
        session_ids.append(note_id)
    for _ in range(n_memories):
        created = EPOCH + timedelta(seconds=rng.randint(0, SPAN_DAYS * 86400))
        mtype = rng.choices(MEMORY_TYPES, MEMORY_WEIGHTS)[0]
        topics = [v.topic()]
        title = v.sentence(topics, 4, 10).replace(":", " ").replace("`", "")
        note_id = "-".join(title.lower().split()[:5]).replace("/", "-").replace(".", "")
        note_id = "".join(ch for ch in note_id if ch.isalnum() or ch == "-")
        note_id = f"{note_id}-{rng.getrandbits(24):06x}"
        folder = vault / "memories" / mtype
        folder.mkdir(parents=True, exist_ok=True)
        size = int(min(3000, max(500, rng.lognormvariate(6.7, 0.4))))
        path = folder / f"{note_id}.md"
        session = rng.choice(session_ids) if session_ids else ""
        path.write_text(memory_text(v, note_id, mtype, title, created, session, topics, size),
                        encoding="utf-8")
        stamp = created.timestamp()
        os.utime(path, (stamp, stamp))
        out["memory"].append(f"memories/{mtype}/{note_id}.md")
    return out


def make_queries(count: int = QUERIES, seed: int = 11) -> list[str]:
    """2-5 word queries: mostly one topic's words, some general words or an identifier."""
    rng = random.Random(seed)
    v = Vocab(random.Random(7))  # the same identifiers as the vault
    queries = []
    for _ in range(count):
        topic = v.topic()
        words = []
        for _ in range(rng.randint(2, 5)):
            r = rng.random()
            if r < 0.65:
                words.append(rng.choice(TOPICS[topic]))
            elif r < 0.9:
                words.append(rng.choice(GENERAL))
            else:
                words.append(rng.choice(v.idents))
        queries.append(" ".join(dict.fromkeys(words)))
    return queries


# --------------------------------------------------------------------------- measuring


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 2)


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _dir_bytes(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(FileNotFoundError):
                total += os.stat(os.path.join(root, name)).st_size
    return total


def _vault_notes(vault: Path) -> list[str]:
    return [p.relative_to(vault).as_posix() for p in vault.rglob("*.md")
            if not any(part.startswith(".") for part in p.relative_to(vault).parts)]


def _touch_notes(vault: Path, rels: list[str], rng: random.Random, round_no: int) -> None:
    """Edit notes the way an editor does: rewrite the file with a changed line."""
    for rel in rels:
        path = vault / rel
        text = path.read_text(encoding="utf-8")
        text = text.rstrip("\n") + f"\n- edited in round {round_no} {rng.getrandbits(32):08x}\n"
        path.write_text(text, encoding="utf-8")


def _run(argv: list[str], env: dict[str, str], cwd: Path, data: bytes | None = None) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, input=data, capture_output=True, env=env, cwd=cwd, timeout=7200,
                          check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed ({proc.returncode}): {proc.stderr[-800:]!r}")
    return elapsed


class Bench:
    def __init__(self, notes: int, workdir: Path, seed: int = 7, log=None,
                 quick: bool = False) -> None:
        self.notes = notes
        self.workdir = workdir
        self.seed = seed
        self.project_dir = workdir / "project"
        self.vault = self.project_dir / ".openCodeMemory"
        self.home = workdir / "home"
        self.log = log or (lambda msg: None)
        self.bin = Path(sys.executable).parent
        big = notes > 20_000
        self.build_runs = 1 if big else 3 if notes >= 5_000 else 5
        self.search_runs = 1 if big else 3
        self.proc_runs = 5 if big else 11
        self.queries_timed = QUERIES
        self.noop_runs, self.python_runs, self.rounds = 21, 21, 3 if big else 5
        if quick:  # the smoke test: every figure once or a few times, in a few seconds
            self.build_runs = self.search_runs = 1
            self.proc_runs, self.queries_timed = 2, 30
            self.noop_runs, self.python_runs, self.rounds = 5, 3, 2
        self.first_build_rate = 0.0
        self.quick = quick
        self.rng = random.Random(seed + 1)
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("CLAUDE", "CURSOR", "GEMINI", "CODEX", "VSCODE", "OCM_"))}
        self.env.update(OCM_HOME=str(self.home), OCM_VAULT=str(self.vault))

    def setup(self) -> None:
        self.project_dir.mkdir(parents=True, exist_ok=True)
        self.home.mkdir(parents=True, exist_ok=True)
        git = shutil.which("git")
        if git:  # a real project is a git repository: session creation reads HEAD
            for args in (["init", "-q"], ["-c", "user.email=b@example.com", "-c",
                                          "user.name=bench", "commit", "-q",
                                          "--allow-empty", "-m", "init"]):
                subprocess.run([git, *args], cwd=self.project_dir, capture_output=True,
                               check=False)
        t0 = time.perf_counter()
        listed = self.workdir / GENERATED
        if (self.vault / "sessions").is_dir():  # --reuse: a vault this script generated
            # the generated notes, not those a run added (its writes and checkpoints)
            rels = (listed.read_text(encoding="utf-8").split() if listed.is_file()
                    else sorted(_vault_notes(self.vault)))
            self.rels = {"session": [], "memory": []}
            for rel in rels:
                self.rels["session" if rel.startswith("sessions/") else "memory"].append(rel)
            if len(rels) != self.notes or not all((self.vault / r).is_file() for r in rels):
                raise RuntimeError(f"{self.vault} does not hold the {self.notes} notes generated"
                                   f" there ({GENERATED} lists them)")
            self.log(f"reusing the {self.notes} notes in {self.vault}")
        else:
            self.rels = generate_vault(self.vault, self.notes, self.seed)
            listed.write_text("\n".join(self.rels["session"] + self.rels["memory"]) + "\n",
                              encoding="utf-8")
            self.log(f"generated {self.notes} notes in {time.perf_counter() - t0:.1f}s")
        self.queries = make_queries()

    def project(self):
        os.environ["OCM_HOME"] = str(self.home)
        from ocm.project import Project

        return Project.open(vault=self.vault, cwd=self.project_dir)

    def hook_and_python(self, hook_runs: int, python_runs: int) -> tuple[float, float]:
        """Median ms of a fresh `ocm-hook claude-code post-tool-use` with an Edit payload,
        and of `python -c pass` with the same interpreter (the process floor)."""
        hook = str(self.bin / "ocm-hook")
        hook_env = {k: v for k, v in self.env.items() if k != "OCM_VAULT"}
        times = []
        for i in range(hook_runs):
            target = self.project_dir / f"src/module_{i}.py"
            payload = {
                "session_id": "bench-claude-session", "transcript_path": "/tmp/t.jsonl",
                "cwd": str(self.project_dir), "permission_mode": "acceptEdits",
                "hook_event_name": "PostToolUse", "tool_name": "Edit",
                "tool_input": {"file_path": str(target), "old_string": "a",
                               "new_string": "b", "replace_all": False},
                "tool_response": {"filePath": str(target), "success": True},
                "tool_use_id": f"toolu_bench_{i:04d}"}
            times.append(_run([hook, "claude-code", "post-tool-use"], hook_env,
                              self.project_dir, json.dumps(payload).encode()))
        python = str(self.bin / "python")
        passes = [_run([python, "-c", "pass"], self.env, self.project_dir)
                  for _ in range(python_runs)]
        return _ms(_median(times)), _ms(_median(passes))

    def measure(self) -> dict[str, float | int]:
        os.environ["OCM_HOME"] = str(self.home)
        os.environ.pop("OCM_VAULT", None)
        out: dict[str, float | int] = {"notes": self.notes}

        # The first search of a vault builds its index in-process (one process: the facade
        # may run inside threaded hosts); `ocm rebuild-index` may fork sub-writers. The JSON
        # reports the command; the log (and bench/README.md) reports both.
        if self.notes <= 20_000 and not self.quick:  # 50k: a quarter of an hour alone
            project = self.project()
            t0 = time.perf_counter()
            report = project.rebuild_index()
            elapsed = time.perf_counter() - t0
            if report.added != self.notes or report.broken:
                raise RuntimeError(f"build indexed {report.added}/{self.notes}, broken "
                                   f"{list(report.broken)[:3]}")
            project.index_for(project.vault).close()
            self.first_build_rate = round(self.notes / elapsed, 1)
            self.log(f"in-process build: {elapsed:.1f}s ({self.first_build_rate} notes/s)")
        ocm = str(self.bin / "ocm")
        # Processes are timed as they run for a user: with ocm's bytecode already written
        # (Python writes it at the first import, unless PYTHONDONTWRITEBYTECODE is set, as
        # in some sandboxes; a wheel install compiles it up front).
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "ocm")],
                       capture_output=True, check=False)
        rates = []
        for run in range(self.build_runs):
            elapsed = _run([ocm, "rebuild-index", "--json", "--vault", str(self.vault)],
                           self.env, self.project_dir)
            rates.append(self.notes / elapsed)
            self.log(f"ocm rebuild-index {run + 1}/{self.build_runs}: {elapsed:.1f}s")
        out["build_notes_per_s"] = round(_median(rates), 1)

        project = self.project()
        from ocm.project import SearchRequest

        quick_warm = self.queries_timed < QUERIES

        # Warm-up: open the searcher, load the term dictionaries.
        for q in self.queries[: 5 if quick_warm else 20]:
            project.search(q)
        p50s, p95s = [], []
        for _ in range(self.search_runs):
            times = []
            for q in self.queries[: self.queries_timed]:
                t0 = time.perf_counter()
                project.search(SearchRequest(query=q, limit=10))
                times.append(time.perf_counter() - t0)
            p50s.append(_pct(times, 0.5))
            p95s.append(_pct(times, 0.95))
        out["search_p50_ms"] = _ms(_median(p50s))
        out["search_p95_ms"] = _ms(_median(p95s))
        self.log(f"search p50 {out['search_p50_ms']} p95 {out['search_p95_ms']}")

        times = []
        for _ in range(self.noop_runs):
            t0 = time.perf_counter()
            project.refresh(project.vault)
            times.append(time.perf_counter() - t0)
        out["noop_refresh_ms"] = _ms(_median(times))

        times = []
        everything = self.rels["session"] + self.rels["memory"]
        for round_no in range(self.rounds):
            chosen = self.rng.sample(everything, 10)
            _touch_notes(self.vault, chosen, self.rng, round_no)
            q = self.queries[round_no]
            t0 = time.perf_counter()
            project.search(SearchRequest(query=q, limit=10))
            times.append(time.perf_counter() - t0)
        out["incremental_10_ms"] = _ms(_median(times))
        self.log(f"noop {out['noop_refresh_ms']} incremental {out['incremental_10_ms']}")

        from ocm.vault.sessions import CheckpointInput

        open_id = Path(self.rels["session"][-1]).stem
        times = []
        for i in range(self.proc_runs):
            inp = CheckpointInput.from_mapping({
                "work_completed": [f"Checkpoint item {i}: tuned the {self.queries[i]} path"],
                "work_pending": [f"Verify {self.queries[i + 1]}"],
                "decisions": [f"**Choice {i}:** keep {self.queries[i + 2]} simple"]})
            t0 = time.perf_counter()
            project.checkpoint(inp, session_id=open_id, tool="claude-code")
            times.append(time.perf_counter() - t0)
        out["checkpoint_ms"] = _ms(_median(times))

        times = []
        for i in range(self.proc_runs):
            q = self.queries[20 + i]
            t0 = time.perf_counter()
            project.remember(f"When {q} fails under load, check the pool size first ({i}).",
                             "gotcha", title=f"{q} fails under load {i}",
                             files=["src/api/pool.py"], tags=["perf"])
            times.append(time.perf_counter() - t0)
        out["remember_ms"] = _ms(_median(times))
        self.log(f"checkpoint {out['checkpoint_ms']} remember {out['remember_ms']}")
        project.search("pool size under load")  # index the writes before the process runs
        project.index_for(project.vault).close()

        times = []
        for i in range(self.proc_runs):
            q = self.queries[40 + i]
            times.append(_run([ocm, "search", "--vault", str(self.vault), "--json", *q.split()],
                              self.env, self.project_dir))
        out["cli_search_ms"] = _ms(_median(times))

        out["hook_ms"], out["python_pass_ms"] = self.hook_and_python(
            self.proc_runs + (0 if self.proc_runs < 5 else 10), self.python_runs)
        self.log(f"cli {out['cli_search_ms']} hook {out['hook_ms']} "
                 f"python {out['python_pass_ms']}")

        out["index_mb"] = round(_dir_bytes(self.vault / ".index") / 1e6, 2)
        return {key: out[key] for key in KEYS}


def run(notes: int, keep: Path | None = None, seed: int = 7, log=None,
        quick: bool = False) -> dict:
    workdir = keep or Path(tempfile.mkdtemp(prefix="ocm-perf-"))
    try:
        bench = Bench(notes, workdir, seed, log, quick)
        bench.setup()
        return bench.measure()
    finally:
        if keep is None:
            shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="work in this (new) folder and keep it")
    parser.add_argument("--reuse", action="store_true",
                        help="with --keep: measure the vault a previous run generated there")
    parser.add_argument("--quick", action="store_true",
                        help="fewer repetitions (the smoke test); figures are noisier")
    args = parser.parse_args(argv)
    if args.notes < 50:
        parser.error("--notes must be at least 50")

    def log(msg: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()) and (
            not args.reuse):
        parser.error(f"--keep {args.keep} must be a new or empty folder (or pass --reuse)")
    result = run(args.notes, args.keep, args.seed, log, args.quick)
    if args.json:
        print(json.dumps(result))
    else:
        width = max(map(len, result))
        for key, value in result.items():
            print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
