"""Clone to first answer: a teammate's first question after `git clone` of a team vault.

    python bench/clone.py --notes 10000 [--json] [--keep DIR] [--team DIR] [--skip PART]

prints bench/README.md's table row (or, with --json, one object of the figures below).

Generates the synthetic vault of `bench/perf.py` (same seed, same queries), commits it in a
git repository as a team shares it (the notes tracked, `.index/` ignored) and, each in a
fresh `git clone` of it:

  cli_first_s        a new `ocm search --json Q` process: start to exit (its answer partial
                     while the index is built; `cli_indexed` of `notes` says how far it got)
  cli_first_cpu_s    that process's CPU time (user + system, with the `find` it waits for)
  cli_first_mb       that process's peak resident memory
  cli_whole_s        from that search's start until the index is whole: the builder it
                     started (`ocm rebuild-index --resume`, both cores) is done, embeddings
                     included, and no `.index/building` mark is left
  build_peak_mb      the builder's peak resident memory (its sub-writers' summed in, sampled
                     every 0.1 s from /proc/PID/smaps_rollup to the end of the build)
  build_peak_pss_mb  the same, proportional (PSS: a page shared since a fork split between
                     the processes sharing it, not counted in each)
  build_cpu_s        the builder's CPU time with its reaped sub-writers' (last sample)
  build_peak_parts_mb  each process at that PSS peak: RSS, PSS, private and shared MB
                     (`builder` 1: the builder; 0: a process forked from it)
  mcp_first_s        a real `ocm mcp` process: start, MCP initialize, first `ocm__search`
                     (through the MCP SDK's client over stdio)
  mcp_call_s         that first `ocm__search` call alone
  mcp_whole_s        from the server's start until an `ocm__search` says nothing about
                     indexing (complete answers), searched every 0.5 s
  rebuild_s          `ocm rebuild-index` from scratch in a third clone (notes/s beside it;
                     rebuild_cpu_s its CPU time, sub-writers included; rebuild_peak_mb the
                     largest process's peak RSS, rebuild_peak_pss_mb all its processes'
                     summed PSS, sampled every 0.1 s)
  fts5_build_s       SQLite FTS5 (bench/peer_driver.py's) building the same notes, in process

`--team DIR` keeps the team repository in DIR/team and reuses it on the next run (generating
100k notes takes minutes); `--skip cli|whole|mcp|rebuild|fts5` leaves a part out (`whole`:
the first answers only, the builds they start stopped). The `ocm` processes run with
Python's bytecode cache on (an installed wheel ships it): a PYTHONDONTWRITEBYTECODE
environment would otherwise compile every module in every process.

Run it with `nice` on a shared machine and say the load (`uptime`) beside the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import perf  # noqa: E402  (the corpus and its queries)
from peer_driver import Fts5  # noqa: E402  (the FTS5 peer, stdlib only)

OCM = Path(sys.executable).parent / "ocm"
WAIT_S = 3600.0


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def team_repo(work: Path, notes: int, seed: int) -> Path:
    """A git repository whose commit holds `notes` notes in `.openCodeMemory/`."""
    team = work / "team"
    perf.generate_vault(team / ".openCodeMemory", notes, seed)
    (team / ".gitignore").write_text(".openCodeMemory/.index/\n.openCodeMemory/.locks/\n")
    _git(team, "init", "-q", "-b", "main")
    _git(team, "add", "-A")
    _git(team, "-c", "user.email=b@example.com", "-c", "user.name=bench", "commit", "-q",
         "-m", "team vault")
    return team


def clone(team: Path, dest: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(team), str(dest)], check=True)
    return dest


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants (a builder, its sub-writers)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [pid, *(one for child in children for one in _tree(int(child)))]


def _memory_kb(pids: set[int]) -> tuple[int, int]:
    """(RSS, PSS) KB of these processes, summed: RSS counts a page shared since a fork in
    each process, PSS splits it between its sharers (what the build takes)."""
    rss = pss = 0
    for one in pids:
        try:
            rollup = Path(f"/proc/{one}/smaps_rollup").read_text().splitlines()
        except OSError:
            continue
        for line in rollup:
            if line.startswith("Rss:"):
                rss += int(line.split()[1])
            elif line.startswith("Pss:"):
                pss += int(line.split()[1])
    return rss, pss


def _parts_kb(pids: list[int]) -> list[dict[str, int]]:
    """Each process's share of a sample, largest PSS first: its parent's pid, RSS, PSS,
    private (its own pages, clean and dirty) and shared (pages another process maps too)
    KB."""
    parts = []
    for one in pids:
        try:
            rollup = Path(f"/proc/{one}/smaps_rollup").read_text().splitlines()
        except OSError:
            continue
        row = {"pid": one, "parent": _cpu_ticks(one)[0], "rss": 0, "pss": 0, "private": 0,
               "shared": 0}
        for line in rollup:
            name, _, value = line.partition(":")
            key = {"Rss": "rss", "Pss": "pss", "Private_Clean": "private",
                   "Private_Dirty": "private", "Shared_Clean": "shared",
                   "Shared_Dirty": "shared"}.get(name)
            if key is not None:
                row[key] += int(value.split()[0])
        parts.append(row)
    return sorted(parts, key=lambda row: -row["pss"])


def _builders(vault: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"rebuild-index" in argv and str(vault).encode() in argv:
                found.append(int(entry.name))
    return found


def _cpu_ticks(pid: int) -> tuple[int, int]:
    """(parent pid, CPU clock ticks of `pid` and of the children it reaped: utime stime
    cutime cstime); (0, 0) once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0, 0
    return int(fields[1]), sum(int(value) for value in fields[11:15])


def _stop_builders(vault: Path) -> None:
    """Stop the builders a first search started for `vault` (each leads its own session)."""
    for pid in _builders(vault):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


def until_whole(vault: Path, peak: list[int], cpu: dict[int, int] | None = None,
                at_peak: list[dict[str, int]] | None = None) -> None:
    """Wait for the vault's build to be over, sampling the builders' summed memory into
    peak ([RSS KB, PSS KB]) and each builder's CPU ticks into `cpu`: a sub-writer's own are
    left out, its parent counts them once it has reaped it. `at_peak`: each process's
    share (`_parts_kb`, `builder` 1 for the builder) at the sample of the highest summed PSS."""
    deadline = time.monotonic() + WAIT_S
    while (vault / ".index" / "building").exists() or _builders(vault):
        builders = _builders(vault)  # (a sub-writer is one too: forked with its argv)
        pids = {one for pid in builders for one in _tree(pid)}
        if at_peak is not None:
            parts = _parts_kb(sorted(pids))
            rss, pss = sum(row["rss"] for row in parts), sum(row["pss"] for row in parts)
            if pss > peak[1]:  # (the builder: the process no other builder forked)
                at_peak[:] = [{"builder": int(row.pop("parent") not in pids), **row}
                              for row in parts]
        else:
            rss, pss = _memory_kb(pids)
        for pid in builders:
            parent, ticks = _cpu_ticks(pid)
            if cpu is not None and parent not in builders:
                cpu[pid] = max(cpu.get(pid, 0), ticks)
        peak[:] = max(peak[0], rss), max(peak[1], pss)
        if time.monotonic() > deadline:
            raise RuntimeError("the build did not finish")
        time.sleep(0.1)


def timed_process(argv: list[str], cwd: Path, env: dict[str, str],
                  tree_peak: list[int] | None = None) -> tuple[float, int, str, float]:
    """(seconds, peak resident KB, stdout, CPU seconds) of one process; `tree_peak`
    ([RSS KB, PSS KB]): its processes' summed memory (its sub-writers'), sampled every 0.1 s."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()))  # type: ignore
    reader.start()
    if tree_peak is not None:
        def sample() -> None:
            while not out:  # (until its stdout closes: it is ending)
                rss, pss = _memory_kb(set(_tree(proc.pid)))
                tree_peak[:] = max(tree_peak[0], rss), max(tree_peak[1], pss)
                time.sleep(0.1)

        threading.Thread(target=sample, daemon=True).start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    reader.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"{argv} exited {proc.returncode}")
    return seconds, usage.ru_maxrss, out[0].decode(), usage.ru_utime + usage.ru_stime


def cli_first(team: Path, work: Path, env: dict[str, str], query: str,
              whole: bool = True) -> dict[str, Any]:
    repo = clone(team, work / "clone-cli")
    t0 = time.perf_counter()
    seconds, peak_kb, out, cpu = timed_process([str(OCM), "search", "--json", query], repo,
                                               env)
    hits = json.loads(out)
    indexing = hits[0].get("indexing") if hits else None
    peak, ticks, at_peak = [0, 0], {}, []
    if not whole:  # the first answer only: the builder it started is stopped
        _stop_builders(repo / ".openCodeMemory")
        return {"cli_first_s": round(seconds, 2), "cli_first_cpu_s": round(cpu, 2),
                "cli_first_mb": round(peak_kb / 1024),
                "cli_indexed": indexing["indexed"] if indexing else None}
    until_whole(repo / ".openCodeMemory", peak, ticks, at_peak)
    return {"cli_first_s": round(seconds, 2), "cli_first_cpu_s": round(cpu, 2),
            "cli_first_mb": round(peak_kb / 1024),
            "cli_indexed": indexing["indexed"] if indexing else None,
            "cli_whole_s": round(time.perf_counter() - t0, 1),
            "build_peak_mb": round(peak[0] / 1024), "build_peak_pss_mb": round(peak[1] / 1024),
            "build_cpu_s": round(sum(ticks.values()) / os.sysconf("SC_CLK_TCK"), 1),
            "build_peak_parts_mb": [{key: value if key == "builder" else round(value / 1024)
                                     for key, value in row.items() if key != "pid"}
                                    for row in at_peak]}


def mcp_first(team: Path, work: Path, env: dict[str, str], query: str,
              whole: bool = True) -> dict[str, Any]:
    import anyio
    from mcp import Client, StdioServerParameters, stdio_client

    repo = clone(team, work / "clone-mcp")
    out: dict[str, Any] = {}

    async def run() -> None:
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "ocm.cli.main", "mcp"],
                                       env={**env, "OCM_PROJECT_DIR": str(repo)}, cwd=str(repo))
        t0 = time.perf_counter()
        with open(os.devnull, "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
                t1 = time.perf_counter()
                first = (await client.call_tool("ocm__search", {"query": query})
                         ).structured_content or {}
                out["mcp_call_s"] = round(time.perf_counter() - t1, 2)
                out["mcp_first_s"] = round(time.perf_counter() - t0, 2)
                out["mcp_indexed"] = (first.get("indexing") or {}).get("indexed")
                while whole:
                    later = (await client.call_tool("ocm__search", {"query": query})
                             ).structured_content or {}
                    if later.get("indexing") is None:
                        break
                    await anyio.sleep(0.5)
                out["mcp_whole_s"] = round(time.perf_counter() - t0, 1)

    anyio.run(run)
    if not whole:
        _stop_builders(repo / ".openCodeMemory")
    return out


def rebuild(team: Path, work: Path, env: dict[str, str], notes: int) -> dict[str, Any]:
    repo = clone(team, work / "clone-rebuild")
    peak = [0, 0]
    seconds, peak_kb, _, cpu = timed_process([str(OCM), "rebuild-index", "--json"], repo, env,
                                             peak)
    return {"rebuild_s": round(seconds, 1), "rebuild_cpu_s": round(cpu, 1),
            "rebuild_notes_per_s": round(notes / seconds),
            "rebuild_peak_mb": round(peak_kb / 1024),
            "rebuild_peak_pss_mb": round(peak[1] / 1024)}


def fts5(team: Path, work: Path, notes: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    Fts5(team / ".openCodeMemory", work / "fts5").build()
    seconds = time.perf_counter() - t0
    return {"fts5_build_s": round(seconds, 1), "fts5_notes_per_s": round(notes / seconds)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--keep", type=Path, help="work in this (new) folder and keep it")
    ap.add_argument("--team", type=Path, help="keep the team repository here and reuse it")
    ap.add_argument("--skip", action="append", default=[],
                    choices=("cli", "whole", "mcp", "rebuild", "fts5"),
                    help="leave this part out (whole: stop the build the first search starts)")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="ocm-clone-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OCM_HOME": str(work / "home")}
    env.pop("OCM_VAULT", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(BENCH.parent / "ocm")],
                   check=True, env=env)
    query = perf.make_queries()[0]
    try:
        if args.team is not None and (args.team / "team" / ".git").is_dir():
            team = args.team / "team"
        else:
            team = team_repo(args.team or work, args.notes, args.seed)
        result: dict[str, Any] = {"notes": args.notes, "query": query,
                                  "load_before": os.getloadavg()[0]}
        parts = {"cli": lambda: cli_first(team, work, env, query, "whole" not in args.skip),
                 "mcp": lambda: mcp_first(team, work, env, query, "whole" not in args.skip),
                 "rebuild": lambda: rebuild(team, work, env, args.notes),
                 "fts5": lambda: fts5(team, work, args.notes)}
        for name, part in parts.items():
            if name not in args.skip:
                result |= part()
        result["load"] = os.getloadavg()[0]
    except BaseException:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
        raise
    r = result
    # bench/README.md's row (commit: `git rev-parse --short HEAD`).
    print(json.dumps(result) if args.json or args.skip else (
        f"| {r['notes']:,} | COMMIT | {r['load']:.1f} | {r['cli_first_s']} ({r['cli_indexed']})"
        f" | {r['cli_whole_s']} | {r['build_peak_mb']} | {r['mcp_first_s']} "
        f"({r['mcp_call_s']}) | {r['mcp_whole_s']} | {r['rebuild_s']} "
        f"({r['rebuild_notes_per_s']}, {r['rebuild_peak_mb']}) | {r['fts5_build_s']} "
        f"({r['fts5_notes_per_s']}) |"), flush=True)
    if args.keep is None:  # (after the figures: removing 100k notes' clones takes minutes)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
