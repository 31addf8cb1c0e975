"""How long redaction takes on a large note and on inputs built to make a regex blow up.

    .venv/bin/python bench/redaction_speed.py [--sizes 250000,500000,1000000]

Times are CPU time of this process (`time.process_time`, best of two), which a busy
neighbour does not inflate. For each adversarial input the time at each size is printed
with the growth from one size to the next: about 2x per doubling is linear, about 4x is
quadratic. `tests/test_redact.py` checks what can be checked without a clock (no nested
backtracking quantifier in any rule, the redacted output of each input); this script is
where the clock lives.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import stress  # noqa: E402

from ocm.vault.secrets.redact import redact  # noqa: E402

# Each unit repeated to the wanted size: prefixes and keywords with nothing valid after them,
# so a rule that rescans the rest of the text per occurrence turns quadratic.
ADVERSARIAL = (
    "eyJ", "_eyJ", "-eyJ", "token=", "x:", "a_", "=", "-----BEGIN PRIVATE KEY-----",
    "Bearer .", "sk-", 'password: "', "_aws_secret", "token: a ", "curl -u ", "curl -H ",
    "heroku=", "okta", "PuTTY-User-Key-File-2:", "machine x password ", "mysql -p",
    "--password ", "AccountKey=", "xoxb-", "key-", "sig=", "1234567890:AA",
    "the password is ", "pass: ", "password=Aa", "pat", "secret_", "a.atlasv1.", "A3-", "EAA",
    "1//0", "v1.0-", "sk.eyJ",
    # redact.py's context rules checked against their formats (docs/secrets.md): a tool name
    # with its flag never following, cookie lists with no long value, wandb.login( calls.
    "openssl x ", "redis-cli x ", "az login x ", "mysql x ", "docker login x ", "cookie:x;",
    "wandb.login(key=", "conn a/b1 ", "default password ",
)
FILLER = (
    "The indexer rebuilds the search index when a note changes.",
    "def get_token(self) -> str:  # returns the cached token",
    "password reset flow uses a signed link that expires in 15 minutes",
    "commit 3f9c2a7e5b1d4c8e9f0a6b2c3d4e5f60718293a4 touched src/auth/token_store.py",
    "| key | value |\n|-----|-------|\n| timeout | 30s |",
    "token = get_token()  # never log it",
)


def note(size: int) -> str:
    """Ordinary lines with one line in fifty holding a secret of the stress corpus."""
    rng = random.Random(7)
    secrets = [before + secret + after for _kind, before, secret, after in
               stress.secret_corpus()]
    lines: list[str] = []
    total = 0
    while total < size:
        line = rng.choice(secrets) if rng.random() < 0.02 else rng.choice(FILLER)
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def cpu(text: str) -> float:
    best = float("inf")
    for _ in range(2):
        start = time.process_time()
        redact(text)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="250000,500000,1000000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    cases = [("note (2 % secret lines)", note)] + [
        (repr(unit), lambda size, unit=unit: unit * (size // len(unit))) for unit in ADVERSARIAL
    ]
    print(f"{'input':34}" + "".join(f"{size:>12,}" for size in sizes) + "   growth per step")
    worst = 0.0
    for name, make in cases:
        times = [cpu(make(size)) for size in sizes]
        growth = [b / a if a > 0.005 else float("nan") for a, b in pairwise(times)]
        worst = max([worst, *(g for g in growth if g == g)])
        print(f"{name[:34]:34}" + "".join(f"{t:11.3f}s" for t in times) + "   "
              + " ".join(f"{g:.1f}x" for g in growth))
    print(f"largest growth per doubling: {worst:.1f}x (linear ~2x, quadratic ~4x)")


if __name__ == "__main__":
    main()
