"""ocm side by side with its peers, on one corpus, in one run.

    python bench/peers.py --notes 10000 [--json] [--no-relevance] [--skip ENGINE ...]
                          [--peers-venv DIR] [--no-install] [--keep DIR]

Generates the synthetic vault of `bench/perf.py` (same seed, same queries) and feeds it to:

  ocm       this checkout: `ocm rebuild-index`, `Project.search` in process (what the MCP
            server runs), `ocm search --json` as a fresh process, `Project.remember`
  fts5      SQLite FTS5 with the porter stemmer (stdlib): the ratio baseline of issue #17
  tantivy   tantivy-py, `en_stem`: the practical limit (Rust, memory-mapped)
  original  the original openCodeMemory, `ocm-session-memory` 0.2.0 (SQLite FTS5 behind its own
            `ocm__checkpoint` / `ocm__search_sessions`)
  basic-memory  basic-memory 0.24.1 through its own `bm reindex --search` sync, `write_note` and
            `search_notes` tools (keyword search, its SQLite FTS5), in a private config dir

tantivy and the original are installed into a separate venv this script makes
(`--peers-venv`, default `~/.cache/ocm-bench/peers`; both packages install an `ocm` module or
heavy dependencies that must not meet ours); basic-memory needs Python >= 3.12, so it gets a
second venv (`--peers312-venv`, default `~/.cache/ocm-bench/peers312`) made with `python3.12`
(or 3.13, 3.14) from PATH or pyenv (`--python312` names one). An engine that cannot run is
reported with the reason, never skipped silently. Every figure is taken in the same run,
interleaved query by query, so machine noise hits all engines alike; ratios ocm/peer are printed
for each.

Per engine (null where the engine cannot do it):
  build_notes_per_s   index every note (ocm: `ocm rebuild-index`, its embeddings included; the
                      original: every note through its checkpoint)
  search_p50_ms/p95   200 queries, warm, in process (the peer's process for peers)
  search_cpu_p50_ms/p95  the same searches' CPU time (that process's): less moved by load
  fresh_search_ms     a new process: start, open the index, first query, exit
  incremental_10_ms   10 notes rewritten on disk, then a search that must see them
  write_ms            one new note through the engine's write path, in a running process
  edit_found          a note edited outside the tool is found by its next search
  mcp_search_p50/p95  ocm only: `ocm__search` through the real MCP server process over stdio
  mcp_rss_mb          ocm only: that server's resident memory after the searches (and peak)
  hook_ms             ocm only: a fresh file-edit hook process (python_pass_ms: the floor)
  ndcg@10, no_result  relevance on the LoCoMo session dev set through the engine's own search
                      (`--no-relevance` skips it; `--relevance-data DIR` picks another set)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))

import perf  # noqa: E402  (bench/perf.py: the corpus, queries and timing helpers)

DRIVER = BENCH / "peer_driver.py"
FIGURES = ("build_notes_per_s", "search_p50_ms", "search_p95_ms", "fresh_search_ms",
           "incremental_10_ms", "write_ms")
# ocm's own figures, null for the peers: its real MCP server (`ocm mcp` over stdio) and its
# file-edit hook against the process floor.
OCM_FIGURES = ("mcp_search_p50_ms", "mcp_search_p95_ms", "mcp_rss_mb", "mcp_peak_rss_mb",
               "hook_ms", "python_pass_ms")
ENGINES = ("ocm", "fts5", "tantivy", "original", "basic-memory")
PEER_PACKAGES = {"tantivy": "tantivy>=0.22,<1", "original": "ocm-session-memory==0.2.0"}
BASIC_MEMORY = "basic-memory==0.24.1"
DEFAULT_VENV = Path.home() / ".cache" / "ocm-bench" / "peers"
DEFAULT_VENV312 = Path.home() / ".cache" / "ocm-bench" / "peers312"
DEFAULT_RELEVANCE = perf.REPO.parent / "shared" / "eval" / "locomo" / "session" / "dev"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def peers_python(venv: Path, install: bool) -> tuple[Path | None, dict[str, str]]:
    """The peers venv's interpreter, and for each peer that could not be installed, why."""
    python = venv / "bin" / "python"
    problems: dict[str, str] = {}
    if not python.exists():
        if not install:
            return None, {e: f"no peers venv at {venv} (run without --no-install)"
                          for e in PEER_PACKAGES}
        venv.parent.mkdir(parents=True, exist_ok=True)
        made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True,
                              text=True, check=False)
        if made.returncode:
            return None, {e: f"venv failed: {made.stderr.strip()[-200:]}" for e in PEER_PACKAGES}
    for engine, spec in PEER_PACKAGES.items():
        module = "tantivy" if engine == "tantivy" else "ocm.tools.search"
        # -I: not the current directory on sys.path (from a checkout, `ocm` would be ours)
        present = subprocess.run([str(python), "-I", "-c", f"import {module}"], capture_output=True,
                                 check=False).returncode == 0
        if present:
            continue
        if not install:
            problems[engine] = f"not installed in {venv}"
            continue
        log(f"installing {spec} into {venv}")
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", spec],
                              capture_output=True, text=True, check=False)
        if done.returncode:
            problems[engine] = f"pip install {spec} failed: {done.stderr.strip()[-200:]}"
    return python, problems


def is_python312(python: Path) -> bool:
    return python.is_file() and subprocess.run(
        [str(python), "-c", "import sys; sys.exit(sys.version_info < (3, 12))"],
        capture_output=True, check=False).returncode == 0


def find_python312() -> Path | None:
    """A Python >= 3.12 on PATH, or else under pyenv (`$PYENV_ROOT` or ~/.pyenv)."""
    names = ("python3.12", "python3.13", "python3.14")
    found = [Path(p) for p in map(shutil.which, names) if p]
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found += sorted(pyenv.glob("3.1[2-9]*/bin/python3"))
    return next((python for python in found if is_python312(python)), None)


def basic_memory_python(venv: Path, install: bool,
                        python312: Path | None) -> tuple[Path | None, str | None]:
    """The Python 3.12 venv's interpreter with basic-memory in it, or why there is none."""
    python = venv / "bin" / "python"
    if not python.exists():
        if not install:
            return None, f"no Python 3.12 peers venv at {venv} (run without --no-install)"
        base = python312 or find_python312()
        if base is None:
            return None, "no Python >= 3.12 on PATH or under pyenv (basic-memory 0.24 needs it)"
        if not is_python312(base):
            return None, f"no Python >= 3.12 at {base} (basic-memory 0.24 needs it)"
        venv.parent.mkdir(parents=True, exist_ok=True)
        made = subprocess.run([str(base), "-m", "venv", str(venv)], capture_output=True,
                              text=True, check=False)
        if made.returncode:
            return None, f"venv failed: {made.stderr.strip()[-200:]}"
    version = BASIC_MEMORY.split("==")[1]
    present = subprocess.run(
        [str(python), "-I", "-c", "import importlib.metadata as m, sys; "
         f"sys.exit(m.version('basic-memory') != '{version}')"],
        capture_output=True, check=False).returncode == 0
    if present:
        return python, None
    if not install:
        return None, f"{BASIC_MEMORY} not installed in {venv}"
    log(f"installing {BASIC_MEMORY} into {venv}")
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", BASIC_MEMORY],
                          capture_output=True, text=True, check=False)
    if done.returncode:
        return None, f"pip install {BASIC_MEMORY} failed: {done.stderr.strip()[-200:]}"
    return python, None


class Driver:
    """A peer engine in its own process (bench/peer_driver.py), one JSON command a line."""

    def __init__(self, name: str, python: Path, vault: Path, work: Path) -> None:
        self.name, self.python, self.vault, self.work = name, python, vault, work
        self.proc = subprocess.Popen(
            [str(python), str(DRIVER), name, "--vault", str(vault), "--work", str(work)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        ready = self.proc.stdout.readline() if self.proc.stdout else ""
        if not ready:
            raise RuntimeError(f"{name} driver did not start")

    def ask(self, **cmd: Any) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name} driver died during {cmd['op']}")
        return json.loads(line)

    def fresh(self, query: str, env: dict[str, str]) -> float:
        return perf._run([str(self.python), str(DRIVER), self.name, "--vault", str(self.vault),
                          "--work", str(self.work), "--once", query], env, self.work)

    def close(self) -> None:
        if self.proc.poll() is None:
            with_stdin = self.proc.stdin
            if with_stdin:
                with_stdin.write(json.dumps({"op": "quit"}) + "\n")
                with_stdin.close()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class Run:
    def __init__(self, args: argparse.Namespace, workdir: Path) -> None:
        self.args = args
        self.bench = perf.Bench(args.notes, workdir / "ocm", args.seed, log)
        self.workdir = workdir
        self.results: dict[str, dict[str, Any]] = {}
        self.drivers: dict[str, Driver] = {}
        big = args.notes > 20_000
        self.proc_runs = 2 if args.quick else 5 if big else 11
        self.rounds = 2 if args.quick else 3 if big else 5

    def _blank(self, status: str) -> dict[str, Any]:
        return {**{k: None for k in (*FIGURES, *OCM_FIGURES)}, "edit_found": None,
                "ndcg@10": None, "no_result": None, "status": status}

    def setup(self) -> None:
        self.bench.setup()
        self.vault = self.bench.vault
        self.queries = self.bench.queries
        # The timed queries (the first 20 only warm up; 20-60 also name writes and processes).
        self.timed = self.queries[:60] if self.args.quick else self.queries
        skip = set(self.args.skip or [])
        for name in ENGINES:
            self.results[name] = self._blank("ok" if name not in skip else "skipped (--skip)")
        wanted = [e for e in ENGINES if e != "ocm" and e not in skip]
        pythons: dict[str, Path | None] = {"fts5": Path(sys.executable)}
        problems: dict[str, str] = {}
        if any(e in PEER_PACKAGES for e in wanted):
            peers_py, problems = peers_python(self.args.peers_venv, not self.args.no_install)
            pythons.update(dict.fromkeys(PEER_PACKAGES, peers_py))
        if "basic-memory" in wanted:
            pythons["basic-memory"], problem = basic_memory_python(
                self.args.peers312_venv, not self.args.no_install, self.args.python312)
            if problem:
                problems["basic-memory"] = problem
        for name in wanted:
            if name in problems:
                self.results[name]["status"] = f"not run: {problems[name]}"
                continue
            py = pythons[name]
            assert py is not None
            self.drivers[name] = Driver(name, py, self.vault, self.workdir / name)

    # ---------------------------------------------------------------------------- figures
    def build(self) -> None:
        ocm = str(self.bench.bin / "ocm")
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(perf.REPO / "ocm")],
                       capture_output=True, check=False)
        elapsed = perf._run([ocm, "rebuild-index", "--json", "--vault", str(self.vault)],
                            self.bench.env, self.bench.project_dir)
        self.results["ocm"]["build_notes_per_s"] = round(self.args.notes / elapsed, 1)
        for name, driver in self.drivers.items():
            reply = driver.ask(op="build")
            self.results[name]["build_notes_per_s"] = round(reply["notes"] / reply["seconds"], 1)
        log("build: " + ", ".join(f"{n} {r['build_notes_per_s']}/s"
                                  for n, r in self.results.items() if r["build_notes_per_s"]))

    def warm(self) -> None:
        from ocm.project import SearchRequest

        self.project = self.bench.project()
        for q in self.queries[:20]:
            self.project.search(q)
            for driver in self.drivers.values():
                driver.ask(op="search", q=q)
        times: dict[str, list[float]] = {n: [] for n in ["ocm", *self.drivers]}
        cpus: dict[str, list[float]] = {n: [] for n in times}  # CPU time: less load-bound
        for q in self.timed:
            t0, cpu0 = time.perf_counter(), time.process_time()
            self.project.search(SearchRequest(query=q, limit=10))
            times["ocm"].append(time.perf_counter() - t0)
            cpus["ocm"].append(time.process_time() - cpu0)
            for name, driver in self.drivers.items():
                reply = driver.ask(op="search", q=q)
                times[name].append(reply["seconds"])
                cpus[name].append(reply["cpu_seconds"])
        for name, values in times.items():
            self.results[name]["search_p50_ms"] = perf._ms(perf._pct(values, 0.5))
            self.results[name]["search_p95_ms"] = perf._ms(perf._pct(values, 0.95))
            self.results[name]["search_cpu_p50_ms"] = perf._ms(perf._pct(cpus[name], 0.5))
            self.results[name]["search_cpu_p95_ms"] = perf._ms(perf._pct(cpus[name], 0.95))
        log("warm p50 wall / CPU: " + ", ".join(
            f"{n} {self.results[n]['search_p50_ms']} / {self.results[n]['search_cpu_p50_ms']} ms"
            for n in times) + "; p95: " + ", ".join(
            f"{n} {self.results[n]['search_p95_ms']} / {self.results[n]['search_cpu_p95_ms']} ms"
            for n in times))

    def fresh(self) -> None:
        ocm = str(self.bench.bin / "ocm")
        self.project.index_for(self.project.vault).close()
        times: dict[str, list[float]] = {n: [] for n in ["ocm", *self.drivers]}
        for i in range(self.proc_runs):
            q = self.queries[40 + i]
            times["ocm"].append(perf._run([ocm, "search", "--vault", str(self.vault), "--json",
                                           *q.split()], self.bench.env, self.bench.project_dir))
            for name, driver in self.drivers.items():
                times[name].append(driver.fresh(q, self.bench.env))
        for name, values in times.items():
            self.results[name]["fresh_search_ms"] = perf._ms(perf._median(values))
        log("fresh: " + ", ".join(f"{n} {self.results[n]['fresh_search_ms']} ms" for n in times))

    def incremental(self) -> None:
        from ocm.project import SearchRequest

        times: dict[str, list[float]] = {n: [] for n in ["ocm", *self.drivers]}
        everything = self.bench.rels["session"] + self.bench.rels["memory"]
        for round_no in range(self.rounds):
            perf._touch_notes(self.vault, self.bench.rng.sample(everything, 10), self.bench.rng,
                              round_no)
            q = self.queries[round_no]
            t0 = time.perf_counter()
            self.project.search(SearchRequest(query=q, limit=10))
            times["ocm"].append(time.perf_counter() - t0)
            for name, driver in self.drivers.items():
                reply = driver.ask(op="refresh_search", q=q)
                if not reply.get("unsupported"):
                    times[name].append(reply["seconds"])
        for name, values in times.items():
            self.results[name]["incremental_10_ms"] = (perf._ms(perf._median(values))
                                                       if values else None)

    def writes(self) -> None:
        times: dict[str, list[float]] = {n: [] for n in ["ocm", *self.drivers]}
        for i in range(self.proc_runs):
            q = self.queries[20 + i]
            title = f"{q} fails under load {i}"
            text = f"When {q} fails under load, check the pool size first ({i})."
            t0 = time.perf_counter()
            self.project.remember(text, "gotcha", title=title, files=["src/api/pool.py"],
                                  tags=["perf"])
            times["ocm"].append(time.perf_counter() - t0)
            for name, driver in self.drivers.items():
                times[name].append(driver.ask(op="write", title=title, text=text)["seconds"])
        for name, values in times.items():
            self.results[name]["write_ms"] = perf._ms(perf._median(values))

    def mcp(self) -> None:
        """ocm's real MCP server (`ocm mcp` over stdio): warm `ocm__search` round trips as a
        host sees them, JSON-RPC and validation included, and the server process's resident
        memory. The client here writes and reads the JSON-RPC lines itself: the MCP SDK's
        client adds ~20 ms of its own per call (it validates each result against the
        tool's schema), which a host's client would not spend in our process."""
        self.project.index_for(self.project.vault).close()
        server = subprocess.Popen([str(self.bench.bin / "ocm"), "mcp"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, env=self.bench.env,
                                  cwd=self.bench.project_dir, text=True, bufsize=1)
        serial = 0

        def call(method: str, params: dict[str, Any], reply: bool = True) -> dict[str, Any]:
            nonlocal serial
            assert server.stdin and server.stdout
            message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
            if reply:
                serial += 1
                message["id"] = serial
            server.stdin.write(json.dumps(message) + "\n")
            server.stdin.flush()
            while reply:
                line = server.stdout.readline()
                if not line:
                    raise RuntimeError(f"ocm mcp exited during {method}")
                answer = json.loads(line)
                if answer.get("id") == serial:
                    if "error" in answer or answer["result"].get("isError"):
                        raise RuntimeError(f"{method} failed: {line[:300]}")
                    return answer
            return {}

        times: list[float] = []
        try:
            call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "peers-bench", "version": "1"}})
            call("notifications/initialized", {}, reply=False)
            for number, q in enumerate(self.timed):
                t0 = time.perf_counter()
                call("tools/call", {"name": "ocm__search",
                                    "arguments": {"query": q, "limit": 10}})
                if number >= 20:  # the first 20 warm up, as in `warm`
                    times.append(time.perf_counter() - t0)
            memory = _memory(server.pid)
        finally:
            if server.stdin:
                server.stdin.close()
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
        result = self.results["ocm"]
        result["mcp_search_p50_ms"] = perf._ms(perf._pct(times, 0.5))
        result["mcp_search_p95_ms"] = perf._ms(perf._pct(times, 0.95))
        result["mcp_rss_mb"] = memory.get("VmRSS")
        result["mcp_peak_rss_mb"] = memory.get("VmHWM")
        log(f"mcp p50 {result['mcp_search_p50_ms']} ms, rss {result['mcp_rss_mb']} MB "
            f"(peak {result['mcp_peak_rss_mb']})")

    def hook(self) -> None:
        result = self.results["ocm"]
        result["hook_ms"], result["python_pass_ms"] = self.bench.hook_and_python(
            self.proc_runs + 10, 21)
        log(f"hook {result['hook_ms']} ms, python -c pass {result['python_pass_ms']} ms")

    def edits(self) -> None:
        word = "zqxeditocmw"
        target = self.vault / self.bench.rels["memory"][0]
        with target.open("a", encoding="utf-8") as fh:
            fh.write(f"\n\nhand edit: {word}\n")
        self.results["ocm"]["edit_found"] = bool(list(self.project.search(word)))
        for name, driver in self.drivers.items():
            self.results[name]["edit_found"] = bool(driver.ask(op="edit_found")["found"])

    def relevance(self, data: Path) -> None:
        import retrieval

        log(f"relevance on {data}")
        with retrieval.isolated_user_vault():
            result = retrieval.run_eval(data)
        agg = retrieval.aggregate(result.queries, timing=False)
        self.results["ocm"]["ndcg@10"] = round(agg["ndcg@10"], 4)
        self.results["ocm"]["no_result"] = sum(1 for q in result.queries if not q.ranked)
        for name, driver in self.drivers.items():
            done = subprocess.run([str(driver.python), str(DRIVER), name, "--eval", str(data)],
                                  capture_output=True, text=True, check=False)
            if done.returncode:
                self.results[name]["status"] += f"; relevance failed: {done.stderr[-200:]}"
                continue
            scored = json.loads(done.stdout)
            self.results[name]["ndcg@10"] = scored["ndcg@10"]
            self.results[name]["no_result"] = scored["no_result"]

    def measure(self) -> dict[str, Any]:
        try:
            self.build()
            self.warm()
            self.fresh()
            self.incremental()
            self.writes()
            self.mcp()
            self.hook()
            self.edits()
        finally:
            for driver in self.drivers.values():
                driver.close()
        if not self.args.no_relevance:
            data = self.args.relevance_data
            if data.is_dir():
                self.relevance(data)
            else:
                for result in self.results.values():
                    result["status"] += f"; relevance not measured: no eval set at {data}"
        return {"notes": self.args.notes, "engines": self.results}


def _memory(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM (peak) of a process, in MB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return {line.split(":")[0]: round(int(line.split()[1]) / 1024, 1)
            for line in status.splitlines() if line.startswith(("VmRSS", "VmHWM"))}


def ratios(result: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """ocm's figure divided by each peer's, for every figure: under 1 is better for ocm on
    times, over 1 on the build rate."""
    engines = result["engines"]
    ocm = engines["ocm"]
    out: dict[str, dict[str, float | None]] = {}
    for name, peer in engines.items():
        if name == "ocm":
            continue
        out[name] = {k: (round(ocm[k] / peer[k], 2) if ocm[k] and peer[k] else None)
                     for k in FIGURES}
    return out


def format_table(result: dict[str, Any]) -> str:
    engines = result["engines"]
    cols = (*FIGURES, "edit_found", "ndcg@10", "no_result")
    ocm = engines["ocm"]
    lines = [f"{result['notes']} notes", "| engine | " + " | ".join(cols) + " | status |",
             "|---" * (len(cols) + 2) + "|"]
    for name, r in engines.items():
        lines.append(f"| {name} | " + " | ".join("–" if r[c] is None else str(r[c]) for c in cols)
                     + f" | {r['status']} |")
    lines += ["", "ocm / peer (search, fresh, incremental, write: lower is better for ocm; "
              "build: higher is better for ocm)", "| peer | " + " | ".join(FIGURES) + " |",
              "|---" * (len(FIGURES) + 1) + "|"]
    for name, row in ratios(result).items():
        lines.append(f"| {name} | " + " | ".join("–" if row[k] is None else f"{row[k]}x"
                                                  for k in FIGURES) + " |")
    lines += ["", "ocm alone: " + ", ".join(f"{k} {ocm[k]}" for k in OCM_FIGURES)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--skip", nargs="*", choices=[e for e in ENGINES if e != "ocm"])
    ap.add_argument("--peers-venv", type=Path, default=DEFAULT_VENV)
    ap.add_argument("--peers312-venv", type=Path, default=DEFAULT_VENV312,
                    help="the Python >= 3.12 venv for basic-memory")
    ap.add_argument("--python312", type=Path,
                    help="the Python >= 3.12 to make that venv with (default: found on PATH/pyenv)")
    ap.add_argument("--no-install", action="store_true",
                    help="use the peers venv as it is; never run pip")
    ap.add_argument("--no-relevance", action="store_true")
    ap.add_argument("--relevance-data", type=Path, default=DEFAULT_RELEVANCE)
    ap.add_argument("--keep", type=Path, help="work in this (new) folder and keep it")
    ap.add_argument("--quick", action="store_true",
                    help="a few repetitions of each figure (the smoke test); noisier")
    args = ap.parse_args(argv)
    if args.notes < 50:
        ap.error("--notes must be at least 50")
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        ap.error(f"--keep {args.keep} must be a new or empty folder")
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="ocm-peers-"))
    try:
        run = Run(args, workdir)
        run.setup()
        result = run.measure()
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        result["ratios"] = ratios(result)
        print(json.dumps(result))
    else:
        print(format_table(result))


if __name__ == "__main__":
    main()
