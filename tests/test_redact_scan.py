"""The redaction scan's shortcuts (redact.py `_scan`: the keyword pass over `_lowered` bytes,
each rule's `gate`, the `lead` tried at a keyword before the rule's own pattern, the
positions shared by rules with the same keywords) change no finding: on a large and varied
corpus `_scan` gives exactly what the plain scan gives, every rule run at every occurrence of
its keywords in `text.lower()`, found one `str.find` at a time, without gates or leads.

The corpus: generated vault notes (bench/perf.py), this repository's own files (code, docs,
tests full of fake credentials), a secret of every kind in its context (the stress corpus),
near misses made from those (characters dropped, changed, case-flipped, glued to keywords and
to each other), texts dense with keywords, and texts with the characters whose lower case is
special.
"""

from __future__ import annotations

import random
import string
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from ocm.vault.secrets.redact import (
    _MARKER_RE,
    REDACTION_KINDS,
    _gate,
    _Keywords,
    _lowered,
    _rightmost_at_most,
    _Rule,
    _scan,
    _Starts,
    find_secrets,
    redact,
)
from tests.test_stress_writers import load_stress

ROOT = Path(__file__).resolve().parent.parent
SUFFIXES = {".py", ".md", ".json", ".jsonl", ".toml", ".txt", ".yaml", ".yml", ".sh", ".cfg"}


class _EveryStart(_Starts):
    """Every distinct keyword position, the lead not consulted."""

    def tried(self, text: str, lead: object) -> list[int]:
        return sorted(set(self.every))


def _occurrences(lowered: str, keyword: str) -> list[int]:
    found, at = [], lowered.find(keyword)
    while at >= 0:
        found.append(at)
        at = lowered.find(keyword, at + 1)
    return found


def _plain_scan(text: str) -> list[tuple[str, int, int]]:
    """The scan without its shortcuts: `text.lower()` (by way of ASCII where a character
    lowers to two), each rule at each occurrence of its keywords, every rule's own pattern."""
    lowered = text.lower()
    if len(lowered) != len(text):
        lowered = text.encode("ascii", "replace").decode().lower()
    found: list[tuple[_Rule, list[tuple[int, int]]]] = []
    for rule in _gate().rules:
        if not rule.keywords:
            found.append((rule, rule.spans(text)))
            continue
        every = [at for keyword in rule.keywords for at in _occurrences(lowered, keyword)]
        if every:
            found.append((rule, rule.spans(text, _EveryStart(every, len(text)))))
    markers = [m.span() for m in _MARKER_RE.finditer(text)]
    hits = []
    for rank, (rule, spans) in enumerate(found):
        for start, end in spans:
            i = _rightmost_at_most([s for s, _ in markers], end - 1)
            if start < end and not (i >= 0 and markers[i][1] > start):
                hits.append((start, -end, rank, rule.kind))
    merged: list[tuple[str, int, int]] = []
    for start, neg_end, _rank, kind in sorted(hits):
        if merged and start < merged[-1][2]:
            merged[-1] = (merged[-1][0], merged[-1][1], max(merged[-1][2], -neg_end))
        else:
            merged.append((kind, start, -neg_end))
    return merged


def _generated_notes(tmp: Path) -> list[str]:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import perf
    finally:
        sys.path.remove(str(ROOT / "bench"))
    perf.generate_vault(tmp, 200, seed=29)
    return [path.read_text(encoding="utf-8") for path in sorted(tmp.rglob("*.md"))]


def _repository_files() -> list[str]:
    texts = []
    for folder in ("ocm", "bench", "docs", "tests", "scripts"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file() and "__pycache__" not in path.parts:
                texts.append(path.read_text(encoding="utf-8", errors="replace"))
    return texts


CONTEXTS = (
    "password=", "PASSWORD: ", "token: ", "the key is ", "api_key = ", 'secretKey: "',
    "Authorization: Bearer ", "authorization: basic ", "curl -u ", "curl --user ",
    "docker login -u x -p ", "helm registry login -p ", "sshpass -p ", "mysql -u root -p",
    "machine h login u password ", "default password ", "Cookie: ", "cookie: a=1; sid=",
    "Cookie : sid=", "cookie\t:\tsid=", " -b ", "--password ", "--token=", "redis-cli -a ",
    "openssl enc -k ", "az login -u x -p ",
    "az\tlogin -p ", "sqlplus u/", "CONNECT u/", "h:5432:db:u:", "_authToken=", '"auth": "',
    ".dockerconfigjson: ", "kind: Secret\ndata:\n  k: ", "--from-literal=a=", "X-Amz-Signature=",
    "?sig=", "&code=", "wandb login ", '"key": "', "KAGGLE_KEY=", "pin: ", "pwd=", "DB_PASS=",
    "bypass=", "Pass=", "token=token=", "password: str = ", "secret: tls-secret",
    "aws_secret_access_key=", "AWS-Secret: ", "SecretAccessKey: ", "https://user:",
    "stringData:", "AccountKey=", "webhook.office.com/webhookb2/",
    "outlook.office365.com/webhook/", "DD_API_KEY=", "\u212aey=", "K\u212aY: ", "\u0130 token=",
    "p\u00e4ssword=", "\u00a0password=\u00a0", "TOKEN\t:=\t", "key => '", "pass: --no-verify",
    'password: "${X}"', "machine a\nlogin b\npassword ", "-----BEGIN RSA PRIVATE KEY-----\n",
    "eyJ", "M", ":AA", "123456789:AA", "sk-", "ghp_", "AKIA", "SK", "[REDACTED:password]",
)
NOISE = string.ascii_letters + string.digits + "_-.:=/+ \t\n\"'`;,&|()[]{}<>@#$%*~!?\\" \
    + "\u212a\u0130\u00e4\u2014"


def _near_misses(samples: list[str], rng: random.Random) -> list[str]:
    def mutated(text: str) -> str:
        chars = list(text)
        for _ in range(rng.randint(1, 4)):
            if not chars:
                break
            i, op = rng.randrange(len(chars)), rng.random()
            if op < 0.3:
                chars[i] = rng.choice(NOISE)
            elif op < 0.5:
                del chars[i]
            elif op < 0.7:
                chars.insert(i, rng.choice(NOISE))
            elif op < 0.85:
                chars[i] = chars[i].swapcase()
            else:
                chars.insert(i, rng.choice(CONTEXTS))
        return "".join(chars)

    texts = []
    for sample in samples:
        for _ in range(12):
            texts.append(mutated(sample))
            texts.append(rng.choice(CONTEXTS) + mutated(sample) + rng.choice(" \n;\"').,")
                         + rng.choice(CONTEXTS))
    for _ in range(1500):  # glued pieces: contexts, values, secrets, separators
        parts = []
        for _ in range(rng.randint(1, 10)):
            pick = rng.random()
            if pick < 0.4:
                parts.append(rng.choice(CONTEXTS))
            elif pick < 0.7:
                alphabet = rng.choice((string.ascii_letters + string.digits, string.hexdigits,
                                       string.ascii_letters + string.digits + "+/=_-."))
                parts.append("".join(rng.choice(alphabet)
                                     for _ in range(rng.choice((3, 8, 16, 24, 32, 40, 64)))))
            elif pick < 0.85:
                parts.append(rng.choice(samples))
            else:
                parts.append(rng.choice((" ", "\n", "\t", " is ", " was ", ": ", "=", '"')))
        texts.append("".join(parts))
    # Keywords dense enough that rules scan the whole text instead of trying each one.
    words = ("token", "key", "pass", "Pass", "KEY", "pwd", "secret", "pin", "default", "helm",
             "docker", "sshpassshpass", "cookie", "machine")
    for _ in range(400):
        texts.append("".join(rng.choice(words) + rng.choice(("", " ", "=", ": ", "=Abc123xyz9",
                                                             " is Zq9xx1yy ", "\n", " -p x "))
                             for _ in range(rng.randint(1, 30))))
    return texts


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Generated notes, a secret of every kind in context, and near misses."""
    samples = [before + secret + after
               for _kind, before, secret, after in load_stress().secret_corpus()]
    texts = _generated_notes(tmp_path_factory.mktemp("vault")) + samples
    return texts + _near_misses(samples, random.Random(29))


def test_the_scan_finds_what_the_plain_scan_finds(made: list[str]) -> None:
    found: set[str] = set()
    with_hits = 0
    for text in made + _repository_files():
        expected = _plain_scan(text)
        assert _scan(text) == expected, text[:300]
        found.update(kind for kind, _, _ in expected)
        with_hits += bool(expected)
    assert with_hits > 2000  # the corpus is not only near misses
    assert set(REDACTION_KINDS) - found == set()  # every kind was found somewhere


def test_a_gate_or_keyword_that_is_missing_means_no_match(made: list[str]) -> None:
    """What `_scan` skips on: where a rule's gate is not found in `_lowered` text its pattern
    matches nowhere; where none of an unanchored rule's keywords is, it finds nothing; at a
    keyword where a lead does not match, its rule's pattern does not either. (An anchored
    rule's pattern may match away from its keywords, as `az\tlogin` does `az login`'s: found
    only where keywords are dense, as before.)"""
    rules = _gate().rules
    assert {"netrc_password", "password", "prose_secret"} <= {
        rule.kind for rule in rules if rule.lead is not None}
    assert {"aws_secret_key", "teams_webhook"} <= {
        rule.kind for rule in rules if not rule.anchored and rule.keywords}
    matched: dict[int, int] = {}
    for text in made:
        lowered = _lowered(text)
        for i, rule in enumerate(rules):
            if rule.pattern.search(text) is None:
                continue  # no match anywhere: nothing a shortcut could lose
            matched[i] = matched.get(i, 0) + 1
            assert rule.gate is None or rule.gate.search(lowered) is not None, (rule.kind, text)
            if not rule.anchored and rule.keywords and not any(
                    keyword.encode() in lowered for keyword in rule.keywords):
                assert rule.spans(text) == [], (rule.kind, text)
            if rule.lead is not None:
                for keyword in rule.keywords:
                    for at in _occurrences(lowered.decode(), keyword):
                        if rule.pattern.match(text, at) is not None:
                            assert rule.lead.match(text, at) is not None, (rule.kind, text)
    shortcut = [i for i, rule in enumerate(rules) if rule.gate is not None
                or rule.lead is not None or rule.kind in ("aws_secret_key", "teams_webhook")]
    assert all(matched.get(i, 0) >= 3 for i in shortcut), [
        rules[i].kind for i in shortcut if matched.get(i, 0) < 3]


def test_keywords_are_found_alike_by_find_and_by_the_automaton(made: list[str]) -> None:
    keywords = _gate().keywords.keywords
    by_find, by_automaton = _Keywords(keywords, 10**12), _Keywords(keywords, 0)
    occurrences = 0
    for text in made + ["", "sshpassshpass", "tokentoken", "keykeykey-"]:
        lowered = _lowered(text)
        found = by_find.find(lowered)
        assert found == {n: sorted(at) for n, at in by_automaton.find(lowered).items()}, text
        occurrences += sum(map(len, found.values()))
    assert occurrences > 10_000


def test_a_process_that_scans_little_never_loads_the_automaton() -> None:
    """A hook redacts one prompt: its keywords are found by `bytes.find`, and the
    Aho-Corasick library (a few ms to import and build) is loaded only past 32 KB scanned."""
    code = (
        "import sys\n"
        "from ocm.vault.secrets.redact import find_secrets\n"
        "assert find_secrets('the token is Zq9xx1yy2 ' * 40)\n"
        "print('ahocorasick_rs' in sys.modules)\n"
        "find_secrets('lorem ipsum dolor sit amet ' * 2000)\n"
        "print('ahocorasick_rs' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.split()
    assert out == ["False", "True"]


def test_lowered_text_keeps_every_position() -> None:
    texts = ["Token=ABC", "p\u00e4ss: x", "\u212aEY=1", "\u212aey \u0130 key", "\u0130key",
             "\u00df TOKEN", "\U0001f511 key", ""]
    for text in texts:
        lowered = text.lower()
        if len(lowered) != len(text):
            lowered = text.encode("ascii", "replace").decode().lower()
        assert _lowered(text) == lowered.encode("ascii", "replace"), text
    # `_lowered` names the only characters beyond ASCII whose lower case is ASCII or longer
    # than one character; a Python whose Unicode tables add one fails here.
    special = [c for c in map(chr, range(128, sys.maxunicode + 1))
               if unicodedata.category(c) != "Cs"
               and ((lower := c.lower()).isascii() or len(lower) != 1)]
    assert special == ["\u0130", "\u212a"]


def test_redacting_is_unchanged_where_keywords_crowd_a_line() -> None:
    # Dense `token` words: the rules scan the whole text; sparse: each keyword is tried.
    dense = "token=Zq9xx1yy2 " + "token " * 40
    sparse = "token=Zq9xx1yy2 " + "lorem ipsum dolor sit " * 40
    assert redact(dense).startswith("token=[REDACTED:password] ")
    assert redact(sparse).startswith("token=[REDACTED:password] ")
    assert find_secrets("the token is Zq9xx1yy2") == [("prose_secret", 13, 22)]
