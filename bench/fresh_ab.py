"""A fresh `ocm search --json` process, two checkouts A/B on one kept vault, interleaved.

    python bench/fresh_ab.py --dir DIR --a CHECKOUT_A --b CHECKOUT_B [--rounds 15] [--edits 4]
                             [--ocm SCRIPT] [--fts5] [--json]

DIR is what `bench/peers.py --keep DIR` (or `bench/perf.py --keep DIR`) left: `ocm/project`
with its vault and `ocm/home`. Each round runs A then B (B then A on odd rounds) on the same
query, the exact command `peers.py` times for `fresh_search_ms` (`ocm search --vault VAULT
--json WORDS`, perf.py's environment, in the project folder); rounds take perf.py's queries
from the 41st on, as peers.py does. Both run the same `ocm` script (`--ocm`, default this
interpreter's) with `PYTHONPATH` set to their checkout: one venv, one installed WordLlama.
(Two venvs each have their own copy of the tokenizer JSON, with its own mtime, and the
tokenizer table cached in `.index/` is keyed by it: each process would parse the JSON again
and rewrite the table the other one wrote.) Reported per checkout: median wall ms and median
CPU ms of the process and its children (the `find` listing included). Every round also
checks that both printed the same JSON: byte for byte, or (counted apart as `last_digit`)
with scores one unit apart in their 4th decimal and nothing else different, which the clock
alone causes: recency decay is computed at each process's own time.

`--fts5`: each round also times the FTS5 peer's fresh process on the same query
(`bench/peer_driver.py fts5 --once`, what `peers.py` times, over the database it kept in
DIR/fts5), and the ratios of issue #17 are given against it.

`--edits N`: then N times, a note rewritten the way an editor does (perf.py's
`_touch_notes`), a new note and a deleted note, each followed by a search of a word the
change holds, by A and B in turn (first A, then B, then the other way round): both outputs
must be the same (the first of the two brings the index up to date, the second searches it
as it is).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import perf  # noqa: E402  (bench/perf.py: the queries, the environment, the edits)


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


class Fresh:
    def __init__(self, workdir: Path, ocm: str) -> None:
        bench = perf.Bench(0, workdir / "ocm")
        self.vault, self.cwd, self.env = bench.vault, bench.project_dir, bench.env
        self.ocm = ocm
        self.fts5 = [sys.executable, str(BENCH / "peer_driver.py"), "fts5", "--vault",
                     str(self.vault), "--work", str(workdir / "fts5"), "--once"]

    def fts5_search(self, query: str) -> tuple[float, float]:
        """(wall s, CPU s) of the FTS5 peer's fresh process."""
        cpu = _children_cpu()
        wall = perf._run([*self.fts5, query], self.env, self.cwd)
        return wall, _children_cpu() - cpu

    def search(self, checkout: str, query: str) -> tuple[float, float, str]:
        """(wall s, CPU s, stdout) of one fresh process running `checkout`'s code."""
        cpu = _children_cpu()
        t0 = time.perf_counter()
        done = subprocess.run([self.ocm, "search", "--vault", str(self.vault), "--json",
                               *query.split()], env={**self.env, "PYTHONPATH": checkout},
                              cwd=self.cwd, capture_output=True, text=True, check=False,
                              timeout=600)
        wall = time.perf_counter() - t0
        if done.returncode != 0:
            raise RuntimeError(f"{checkout} search {query!r} failed: {done.stderr[-600:]}")
        return wall, _children_cpu() - cpu, done.stdout


def _same(one: str, other: str) -> str | None:
    """"same", "last_digit" (scores one unit apart in the 4th decimal, nothing else), or
    None: the two outputs differ."""
    if one == other:
        return "same"
    first, second = json.loads(one), json.loads(other)
    if len(first) != len(second):
        return None
    for a, b in zip(first, second, strict=True):
        if {**a, "score": 0} != {**b, "score": 0} or abs(a["score"] - b["score"]) > 1.5e-4:
            return None
    return "last_digit"


def _edits(fresh: Fresh, scripts: list[str], count: int, seed: int) -> int:
    """Changed notes searched by both scripts in turn; the number of outputs compared."""
    rng = random.Random(seed)
    notes = sorted(p.relative_to(fresh.vault).as_posix()
                   for p in (fresh.vault / "memories").rglob("*.md"))
    compared = 0
    for turn in range(count):
        order = scripts if turn % 2 == 0 else scripts[::-1]
        edited, deleted = rng.sample(notes, 2)
        word = f"zqedit{turn}x{rng.getrandbits(24):06x}"
        perf._touch_notes(fresh.vault, [edited], rng, turn)
        path = fresh.vault / edited
        path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + f"\n{word}\n",
                        encoding="utf-8")
        added = Path(edited).parent / f"zz-fresh-ab-{turn}-{rng.getrandbits(24):06x}.md"
        (fresh.vault / added).write_text(
            f"---\nid: {added.stem}\ntype: gotcha\ntitle: Added {word}\nstatus: active\n"
            f"scope: project\n---\n\n{word} added by hand\n", encoding="utf-8")
        gone = (fresh.vault / deleted).read_text(encoding="utf-8")
        (fresh.vault / deleted).unlink()
        notes.remove(deleted)
        outputs = [fresh.search(checkout, word)[2] for checkout in order]
        found = json.loads(outputs[0])
        if _same(*outputs) is None:
            raise SystemExit(f"edit {turn}: the two outputs differ for {word!r}")
        if f"Added {word}" not in {h["title"] for h in found} or len(found) < 2:
            raise SystemExit(f"edit {turn}: {word!r} found {[h['title'] for h in found]}")
        gone_title = next((line[7:] for line in gone.splitlines()
                           if line.startswith("title: ")), None)
        if gone_title:
            outputs = [fresh.search(checkout, gone_title)[2] for checkout in order[::-1]]
            if _same(*outputs) is None:
                raise SystemExit(f"edit {turn}: outputs differ for the deleted {gone_title!r}")
            if any(h["markdown_path"].endswith(deleted) for h in json.loads(outputs[0])):
                raise SystemExit(f"edit {turn}: the deleted {deleted} was found")
        compared += 2
    return compared


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--a", required=True, help="checkout A (put on PYTHONPATH)")
    parser.add_argument("--b", required=True, help="checkout B")
    parser.add_argument("--ocm", default=str(Path(sys.executable).parent / "ocm"),
                        help="the `ocm` script both run")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--edits", type=int, default=0)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--fts5", action="store_true", help="time the FTS5 peer too")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    fresh = Fresh(args.dir, args.ocm)
    queries = perf.make_queries()
    scripts = [args.a, args.b]
    for checkout in scripts:  # bytecode written as a wheel install has it (perf.py does too)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(checkout) / "ocm")],
                       capture_output=True, check=False)
    for checkout in scripts:  # one search each first: derived files written, caches warm
        fresh.search(checkout, queries[0])
    times: dict[str, list[tuple[float, float]]] = {checkout: [] for checkout in scripts}
    alike: dict[str | None, int] = {}
    for round_no in range(args.rounds):
        query = queries[40 + round_no % (len(queries) - 40)]
        outputs = []
        for checkout in scripts if round_no % 2 == 0 else scripts[::-1]:
            wall, cpu, out = fresh.search(checkout, query)
            times[checkout].append((wall, cpu))
            outputs.append(out)
        same = _same(*outputs)
        alike[same] = alike.get(same, 0) + 1
        if same is None:
            for name, out in zip("ab" if round_no % 2 == 0 else "ba", outputs, strict=True):
                Path(f"fresh_ab.{name}.json").write_text(out, encoding="utf-8")
            raise SystemExit(f"round {round_no}: the outputs differ for {query!r} "
                             "(fresh_ab.a.json, fresh_ab.b.json)")
        if args.fts5:
            times.setdefault("fts5", []).append(fresh.fts5_search(query))
    named = {"a": args.a, "b": args.b, **({"fts5": "fts5"} if args.fts5 else {})}
    result: dict = {
        name: {"wall_ms": round(1000 * statistics.median(w for w, _ in times[key]), 1),
               "cpu_ms": round(1000 * statistics.median(c for _, c in times[key]), 1)}
        for name, key in named.items()}
    if args.fts5:
        for name in ("a", "b"):
            result[name]["x_fts5"] = round(
                result[name]["wall_ms"] / result["fts5"]["wall_ms"], 2)
    result["rounds"] = args.rounds
    result["same_output"] = alike.get("same", 0)
    result["last_digit"] = alike.get("last_digit", 0)
    result["load"] = os.getloadavg()[0]
    if args.edits:
        result["edits_compared"] = _edits(fresh, scripts, args.edits, args.seed)
    if args.json:
        print(json.dumps(result))
    else:
        for name in named:
            print(f"{name}: wall {result[name]['wall_ms']} ms, cpu {result[name]['cpu_ms']} ms")
        print(f"rounds {args.rounds}, load {result['load']:.1f}")


if __name__ == "__main__":
    main()
