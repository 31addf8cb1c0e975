"""Cost of capture in the hook: a Stop with nothing new, and a Stop folding a big transcript.

    python bench/capture.py [--sizes 1,5,20] [--runs 7] [--json]

In a temp git repo with a vault, a Claude Code transcript of N MB is built from the recorded
real one (`tests/fixtures/capture/…/8dd515cb…jsonl`: its user turn, tool calls and results
repeated with fresh prompts and ids, plus a 2 KB tool output a turn, as real transcripts
carry), then a fresh `ocm-hook claude-code stop` process folds all of it into the
transcript note (note and marker removed between runs, not timed). Also measured: the same
Stop when nothing is new (the quiet path) against `python -c pass`. Wall time of whole
processes, p50/p95 over `--runs`. Reported in bench/README.md, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = (REPO / "tests" / "fixtures" / "capture" / "transcripts" / "claude-code"
          / "8dd515cb-48af-4af7-ad88-d6e4db65c3fe.jsonl")
BIN = Path(sys.executable).parent
SID = "bench-capture-0001"


def build_transcript(path: Path, megabytes: float) -> int:
    """A transcript of about `megabytes`, turns from the recorded session; returns turns."""
    lines = SOURCE.read_text().splitlines()
    target = int(megabytes * 1_000_000)
    out: list[str] = []
    size = turn = 0
    filler = "log line of a test run with some output\n" * 50
    while size < target:
        turn += 1
        for line in lines:
            rec = json.loads(line)
            message = rec.get("message")
            if rec.get("type") == "user" and isinstance(message, dict) and isinstance(
                    message.get("content"), str):
                message["content"] = f"turn {turn}: make the retry budget {turn} attempts"
            if isinstance(message, dict) and isinstance(message.get("content"), list):
                for block in message["content"]:
                    if block.get("type") == "tool_result" and isinstance(
                            block.get("content"), str):
                        block["content"] += "\n" + filler
            text = json.dumps(rec) + "\n"
            out.append(text)
            size += len(text)
    path.write_text("".join(out))
    return turn


CPU: list[float] = []  # CPU seconds (user + sys) of each timed process, in order


def _time(argv: list[str], data: bytes, env: dict[str, str], cwd: Path) -> float:
    """Wall milliseconds of one process; its CPU milliseconds go to `CPU` (on a loaded
    machine the CPU time is what an idle one would take, near enough)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, input=data, capture_output=True, env=env, cwd=cwd, check=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return wall


def _pct(values: list[float]) -> tuple[float, float]:
    values = sorted(values)
    p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
    return round(statistics.median(values), 1), round(p95, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1,5,20")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ocm-capture-bench-"))
    try:
        repo = tmp / "proj"
        repo.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(
            ("CLAUDE", "CURSOR", "GEMINI", "CODEX", "OCM_"))}
        env["OCM_HOME"] = str(tmp / "ocm-home")
        for cmd in (["git", "init", "-q"], ["git", "config", "user.email", "b@x"],
                    ["git", "config", "user.name", "b"],
                    ["git", "commit", "-q", "--allow-empty", "-m", "init"]):
            subprocess.run(cmd, cwd=repo, check=True, capture_output=True)
        subprocess.run([str(BIN / "ocm"), "init", "--agents", "none"], cwd=repo, env=env,
                       check=True, capture_output=True)
        hook = [str(BIN / "ocm-hook"), "claude-code"]
        transcript = tmp / "t.jsonl"
        base = {"session_id": SID, "cwd": str(repo), "transcript_path": str(transcript)}
        start = json.dumps({**base, "hook_event_name": "SessionStart", "source": "startup"})
        subprocess.run([*hook, "session-start"], input=start.encode(), env=env, cwd=repo,
                       check=True, capture_output=True)
        stop = json.dumps({**base, "hook_event_name": "Stop",
                           "last_assistant_message": "Done."}).encode()
        vault = repo / ".openCodeMemory"
        result: dict[str, object] = {"runs": args.runs}
        for size in [float(s) for s in args.sizes.split(",")]:
            turns = build_transcript(transcript, size)
            times = []
            CPU.clear()
            for _ in range(args.runs):
                for folder in ("transcripts", ".hooks/transcripts", ".hooks/seen"):
                    shutil.rmtree(vault / folder, ignore_errors=True)
                times.append(_time([*hook, "stop"], stop, env, repo))
            note = next((vault / "transcripts").glob("*.md"))
            result[f"fold_{size:g}mb"] = {"turns": turns, "p50_ms": _pct(times)[0],
                                          "p95_ms": _pct(times)[1],
                                          "cpu_p50_ms": _pct(CPU)[0], "cpu_p95_ms": _pct(CPU)[1],
                                          "note_kb": round(note.stat().st_size / 1000)}
        CPU.clear()
        quiet = [_time([*hook, "stop"], stop, env, repo) for _ in range(args.runs * 3)]
        quiet_cpu = list(CPU)
        CPU.clear()
        floor = [_time([sys.executable, "-c", "pass"], b"", env, repo)
                 for _ in range(args.runs * 3)]
        result["quiet_stop_ms"] = dict(zip(("p50", "p95"), _pct(quiet), strict=True))
        result["python_pass_ms"] = dict(zip(("p50", "p95"), _pct(floor), strict=True))
        result["quiet_ratio_p50"] = round(_pct(quiet)[0] / _pct(floor)[0], 2)
        result["quiet_cpu_ms"] = dict(zip(("p50", "p95"), _pct(quiet_cpu), strict=True))
        result["python_pass_cpu_ms"] = dict(zip(("p50", "p95"), _pct(CPU), strict=True))
        result["quiet_cpu_ratio_p50"] = round(_pct(quiet_cpu)[0] / _pct(CPU)[0], 2)
        if args.json:
            print(json.dumps(result))
        else:
            for key, value in result.items():
                print(f"{key:16} {value}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
