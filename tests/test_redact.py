"""Tests for ocm.vault.secrets.redact.

Every fake secret is assembled at import time from a prefix and seeded pseudo-random filler,
so this file contains nothing that a secret scanner would flag as a leaked credential.
"""

from __future__ import annotations

import random
import re
import re._constants as _const
import re._parser as _parser
import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ocm.vault.secrets.redact as redact_module
from ocm.vault.secrets.redact import REDACTION_KINDS, find_secrets, redact

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"


def fake(length: int, alphabet: str = ALNUM, seed: str = "") -> str:
    """Deterministic filler; always contains a digit, an upper and a lower case letter when the
    alphabet has them, so every detector's "looks random" heuristics see a realistic value."""
    rng = random.Random(f"{seed}/{length}/{alphabet}")
    classes = (string.digits, string.ascii_uppercase, string.ascii_lowercase)
    wanted = [set(cls) for cls in classes if set(cls) & set(alphabet)]
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(length))
        if all(cls & set(value) for cls in wanted):
            return value


AWS_ACCESS_KEY = "AK" + "IA" + fake(16, UPPER_ALNUM, "aws-id")
AWS_SECRET_KEY = fake(40, B64, "aws-secret")
GITHUB_TOKEN = "gh" + "p_" + fake(36, seed="gh")
GITHUB_PAT = "github" + "_pat_" + fake(22, seed="pat1") + "_" + fake(59, seed="pat2")
OPENAI_KEY = "sk" + "-" + fake(48, seed="openai")
OPENAI_PROJECT_KEY = "sk" + "-proj-" + fake(56, URLSAFE, "openai-proj")
ANTHROPIC_KEY = "sk" + "-ant-api03-" + fake(93, URLSAFE, "anthropic") + "AA"
SLACK_TOKEN = "xo" + "xb-" + fake(12, string.digits, "s1") + "-" + fake(13, string.digits, "s2")
SLACK_TOKEN += "-" + fake(24, seed="s3")
SLACK_WEBHOOK_PATH = (
    "hooks" + ".slack.com/services/T" + fake(8, UPPER_ALNUM, "w1") + "/B"
    + fake(8, UPPER_ALNUM, "w2") + "/" + fake(24, seed="w3")
)  # fmt: skip
STRIPE_KEY = "sk" + "_live_" + fake(24, seed="stripe")
GOOGLE_API_KEY = "AI" + "za" + fake(35, URLSAFE, "google")
GITLAB_TOKEN = "gl" + "pat-" + fake(20, URLSAFE, "gitlab")
NPM_TOKEN = "np" + "m_" + fake(36, seed="npm")
JWT = ".".join(
    [
        "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        "ey" + "J" + fake(40, URLSAFE, "jwt-payload"),
        fake(43, URLSAFE, "jwt-sig"),
    ]
)
OPAQUE_TOKEN = fake(32, URLSAFE, "opaque")
PRIVATE_KEY_BODY = "\n".join(fake(64, B64, f"pem{i}") for i in range(6)) + "\n" + fake(20, B64)
PRIVATE_KEY = (
    "-----BEGIN " + "RSA PRIVATE KEY-----\n" + PRIVATE_KEY_BODY + "\n-----END RSA PRIVATE KEY-----"
)
PASSWORD = "hunter2" + fake(6, seed="pw")
URL_PASSWORD = fake(14, seed="urlpw") + "%21"

# (kind, text before the secret, the secret, text after it). The expected output is exactly
# before + "[REDACTED:kind]" + after: the secret is gone and every other byte is untouched.
KIND_CASES = [
    ("aws_access_key", "aws_access_key_id = ", AWS_ACCESS_KEY, "\nregion = eu-west-1"),
    ("aws_secret_key", "aws_secret_access_key = ", AWS_SECRET_KEY, "\n"),
    ("aws_secret_key", 'export AWS_SECRET_ACCESS_KEY="', AWS_SECRET_KEY, '"'),
    ("github_token", "CI uses ", GITHUB_TOKEN, " to push tags."),
    ("github_token", "token for the bot: ", GITHUB_PAT, " (expires soon)"),
    ("openai_key", 'client = OpenAI(api_key="', OPENAI_KEY, '")'),
    ("openai_key", "OPENAI_API_KEY=", OPENAI_PROJECT_KEY, "\nDEBUG=1"),
    ("anthropic_key", "ANTHROPIC_API_KEY=", ANTHROPIC_KEY, "\n"),
    ("anthropic_key", "the key ", ANTHROPIC_KEY, " is for staging"),
    ("slack_token", "bot token ", SLACK_TOKEN, " in the vault"),
    ("slack_webhook", "POST to https://", SLACK_WEBHOOK_PATH, " on deploy"),
    ("stripe_key", "Stripe.api_key = ", STRIPE_KEY, "  # prod"),
    ("google_api_key", "maps key ", GOOGLE_API_KEY, " restricted to referrer"),
    ("gitlab_token", "git push with ", GITLAB_TOKEN, " works"),
    ("npm_token", "//registry.npmjs.org/:_authToken=", NPM_TOKEN, "\n"),
    ("private_key", "deploy key:\n", PRIVATE_KEY, "\nend of note"),
    ("jwt", "session cookie was ", JWT, "; Path=/"),
    ("bearer_token", "curl -H 'Authorization: Bearer ", OPAQUE_TOKEN, "' https://api.local/v1"),
    ("bearer_token", "send Bearer ", OPAQUE_TOKEN, " with each call"),
    ("password", "DB_PASSWORD=", PASSWORD, "\nDB_USER=app"),
    ("password", "passwd: ", PASSWORD, "\nuser: app"),
    ("password", 'pwd = "', PASSWORD, '"'),
    ("password", '{"password": "', PASSWORD, '", "user": "app"}'),
    ("password", "SECRET=", PASSWORD, "\n"),
    ("password", "api_key=", PASSWORD, "&page=2"),
    ("password", "token = '", PASSWORD, "'"),
    ("password", "Server=db;User Id=sa;Password=", PASSWORD, ";"),
    ("password", 'password: str = "', PASSWORD, '"'),
    ("password", "clientSecret: ", PASSWORD, ",\n"),
    ("url_credentials", "DATABASE_URL=postgres://admin:", URL_PASSWORD, "@db.internal:5432/app"),
    ("url_credentials", "redis://:", URL_PASSWORD, "@cache:6379/0"),
]

REQUIRED_KINDS = {
    "aws_access_key", "aws_secret_key", "github_token", "openai_key", "anthropic_key",
    "slack_token", "slack_webhook", "stripe_key", "google_api_key", "gitlab_token",
    "npm_token", "private_key", "jwt", "bearer_token", "password", "url_credentials",
}  # fmt: skip

# Prose and code that mention secrets without containing one; must come back byte-identical.
FALSE_POSITIVES = [
    "Implement the password reset flow before launch.",
    "the token expired, so the client retried with a fresh one",
    "    def get_token(self):\n        return self._token",
    "token = get_token()",
    "password = os.environ['DB_PASSWORD']",
    "api_key = settings.OPENAI_API_KEY",
    "def login(username: str, password: str) -> bool:",
    "class Settings(BaseModel):\n    api_key: SecretStr\n    token: str | None = None",
    "interface Creds { password: string; token?: string }",
    "commit 3f9c2a7e5b1d4c8e9f0a6b2c3d4e5f60718293a4 fixed the race",
    "request id 550e8400-e29b-41d4-a716-446655440000 timed out",
    "see src/auth/token_store.py and tests/test_password_policy.py",
    "we compared sk-learn and xgboost on the tabular set",
    "Bearer tokens go in the Authorization header.",
    "Authorization: Bearer $API_TOKEN",
    "Authorization: Bearer <token>",
    "if password == confirm_password:",
    "max_tokens=4096",
    'tokenizer.eos_token = "<|endoftext|>"',
    "password: ${{ secrets.DB_PASSWORD }}",
    "DB_PASSWORD=${DB_PASSWORD}",
    "Token: refreshed every hour by the cron job",
    "secret santa list is in notes/holidays.md",
    "The -----BEGIN PUBLIC KEY----- header marks a public key.",
    "https://example.com:8443/path?q=1 and ssh://git@github.com:22/org/repo.git",
    "git@github.com:org/repo.git",
    "bypass=enabled and compass=north",
    'cache_key = "user:42:profile"',
    "password = new_password",
    "PWD=/home/dev/project",
    "std::string token; token::parse(input);",
    "keys: [REDACTED:password] and [REDACTED:github_token] were already removed",
    "Der Schlüssel ist geheim — 日本語のテキスト, emoji 🔑 included.",
]


def _case_id(case: tuple[str, str, str, str]) -> str:
    return f"{case[0]}:{case[1].strip()[:24]}"


@pytest.mark.parametrize("case", KIND_CASES, ids=_case_id)
def test_each_kind_is_redacted_and_context_kept(case: tuple[str, str, str, str]) -> None:
    kind, before, secret, after = case
    out = redact(before + secret + after)
    assert out == before + f"[REDACTED:{kind}]" + after
    assert secret not in out


@pytest.mark.parametrize("case", KIND_CASES, ids=_case_id)
def test_find_secrets_reports_the_secret_span(case: tuple[str, str, str, str]) -> None:
    kind, before, secret, after = case
    assert find_secrets(before + secret + after) == [(kind, len(before), len(before) + len(secret))]


def test_every_required_kind_is_declared_and_tested() -> None:
    assert set(REDACTION_KINDS) >= REQUIRED_KINDS
    assert len(set(REDACTION_KINDS)) == len(REDACTION_KINDS)
    assert all(re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*", kind) for kind in REDACTION_KINDS)
    assert {case[0] for case in KIND_CASES} == REQUIRED_KINDS


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_ordinary_prose_and_code_are_left_alone(text: str) -> None:
    assert find_secrets(text) == []
    assert redact(text) == text


def test_false_positive_corpus_is_large_enough() -> None:
    assert len(FALSE_POSITIVES) >= 20


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DB_PASSWORD=hunter2secret", "DB_PASSWORD=[REDACTED:password]"),
        ('"password": "hunter2secret"', '"password": "[REDACTED:password]"'),
        ("password='hunter2secret'", "password='[REDACTED:password]'"),
        ("DB_PASS := hunter2secret", "DB_PASS := [REDACTED:password]"),
        ("'secret' => 'hunter2secret'", "'secret' => '[REDACTED:password]'"),
        ("Authorization: Bearer " + JWT, "Authorization: Bearer [REDACTED:jwt]"),
        ("bearer " + OPAQUE_TOKEN, "bearer [REDACTED:bearer_token]"),
        ("https://bot:" + URL_PASSWORD + "@h.io", "https://bot:[REDACTED:url_credentials]@h.io"),
    ],
)
def test_key_separator_quotes_and_neighbours_are_kept(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_short_values_and_comparisons_are_not_passwords() -> None:
    for text in ("password=abc", "token: tok", "password == 'hunter2secret'", 'pwd = ""'):
        assert redact(text) == text


def test_multiline_private_key_block_is_removed_whole() -> None:
    for label in ("RSA ", "OPENSSH ", "EC ", "ENCRYPTED ", ""):
        block = f"-----BEGIN {label}PRIVATE KEY-----\n{PRIVATE_KEY_BODY}\n"
        block += f"-----END {label}PRIVATE KEY-----"
        text = f"# Deploy\n\nKey used by CI:\n\n{block}\n\nRotate it yearly.\n"
        out = redact(text)
        assert out == "# Deploy\n\nKey used by CI:\n\n[REDACTED:private_key]\n\nRotate it yearly.\n"
        assert "PRIVATE KEY" not in out
        assert not any(line in out for line in PRIVATE_KEY_BODY.splitlines())


def test_private_key_without_end_is_redacted_to_end_of_text() -> None:
    text = "pasted half a key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + PRIVATE_KEY_BODY[:100]
    assert redact(text) == "pasted half a key:\n[REDACTED:private_key]"


def test_two_private_keys_and_text_between_them() -> None:
    text = f"a\n{PRIVATE_KEY}\nbetween\n{PRIVATE_KEY}\nz"
    assert redact(text) == "a\n[REDACTED:private_key]\nbetween\n[REDACTED:private_key]\nz"


def test_assignment_nested_in_a_value_is_still_seen() -> None:
    # `bypass` is not a secret name, but the `token=` inside its value is.
    assert redact("bypass=token=" + PASSWORD) == "bypass=token=[REDACTED:password]"
    assert redact("password: passwd: " + PASSWORD) == "password: passwd: [REDACTED:password]"


def test_secrets_glued_together_are_all_removed_and_stable() -> None:
    # Once the key block is a marker, the token after it no longer looks glued to a word.
    text = f"{PRIVATE_KEY}{GITHUB_TOKEN}\n{JWT}{AWS_ACCESS_KEY} x"
    out = redact(text)
    assert out.startswith("[REDACTED:private_key][REDACTED:github_token]\n")
    assert GITHUB_TOKEN not in out and PRIVATE_KEY_BODY[:64] not in out
    assert redact(out) == out


def test_find_secrets_agrees_with_redact() -> None:
    doc = _all_cases_document()
    rebuilt, pos = [], 0
    for kind, start, end in find_secrets(doc):
        rebuilt.append(doc[pos:start] + f"[REDACTED:{kind}]")
        pos = end
    rebuilt.append(doc[pos:])
    assert "".join(rebuilt) == redact(doc)


def test_secret_inside_an_assignment_is_removed_in_full() -> None:
    # The generic and the specific rule both fire; the merged span must leave nothing behind.
    text = f'config = {{"token": "Bearer {OPAQUE_TOKEN}", "key": "{GITHUB_TOKEN}"}}'
    out = redact(text)
    assert OPAQUE_TOKEN not in out
    assert GITHUB_TOKEN not in out
    assert out.startswith('config = {"token": "[REDACTED:')


def _all_cases_document() -> str:
    lines = ["# Notes from the incident", ""]
    for kind, before, secret, after in KIND_CASES:
        lines.append(f"- {kind}: {before}{secret}{after}")
    lines.extend(FALSE_POSITIVES)
    return "\n".join(lines)


def test_document_with_everything_is_redacted_and_idempotent() -> None:
    doc = _all_cases_document()
    out = redact(doc)
    for _kind, _before, secret, _after in KIND_CASES:
        assert secret not in out
    for text in FALSE_POSITIVES:
        assert text in out
    assert redact(out) == out
    assert find_secrets(out) == []


@pytest.mark.parametrize("case", KIND_CASES, ids=_case_id)
def test_idempotent_per_case(case: tuple[str, str, str, str]) -> None:
    text = "".join(case[1:])
    once = redact(text)
    assert redact(once) == once


def test_markers_are_never_rematched() -> None:
    markers = " ".join(f"[REDACTED:{kind}]" for kind in REDACTION_KINDS)
    for text in (
        markers,
        "password=[REDACTED:password]",
        'api_key: "[REDACTED:password]"',
        "Authorization: Bearer [REDACTED:bearer_token]",
        "postgres://u:[REDACTED:url_credentials]@h/db",
    ):
        assert redact(text) == text


def test_spans_are_sorted_non_overlapping_and_known_kinds() -> None:
    spans = find_secrets(_all_cases_document())
    assert len(spans) == len(KIND_CASES)
    for (_, _, end), (_, start, _) in zip(spans, spans[1:], strict=False):
        assert end <= start
    assert all(kind in REDACTION_KINDS and start < end for kind, start, end in spans)


def test_empty_text() -> None:
    assert redact("") == ""
    assert find_secrets("") == []


# --- properties ---------------------------------------------------------------------------

# Lower-case words and punctuation cannot form any detector's shape: no digits, capitals,
# `_`, `-`, `=` or `:`.
SAFE_ALPHABET = string.ascii_lowercase + " \n\t.,!?'()"
SECRET_SNIPPETS = [before + secret + after for _kind, before, secret, after in KIND_CASES]


@given(st.text(alphabet=SAFE_ALPHABET))
def test_text_without_secret_characters_is_unchanged(text: str) -> None:
    assert redact(text) == text


@given(st.text())
def test_arbitrary_unicode_never_raises_and_is_stable(text: str) -> None:
    out = redact(text)
    assert isinstance(out, str)
    assert redact(out) == out
    prev_end = 0
    for kind, start, end in find_secrets(text):
        assert kind in REDACTION_KINDS
        assert prev_end <= start < end <= len(text)
        prev_end = end


@settings(max_examples=200)
@given(
    st.lists(
        st.one_of(st.sampled_from(SECRET_SNIPPETS), st.text(alphabet=SAFE_ALPHABET, max_size=30)),
        max_size=8,
    )
)
def test_mixed_documents_lose_every_secret(parts: list[str]) -> None:
    text = "\n".join(parts)
    out = redact(text)
    for _kind, _before, secret, _after in KIND_CASES:
        assert secret not in out
    assert redact(out) == out


@settings(max_examples=200)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(SECRET_SNIPPETS),
            st.sampled_from([s for _k, _b, s, _a in KIND_CASES]),
            st.text(max_size=12),
            st.sampled_from(["=", ":", '"', "'", " ", "\n", "@", "://", "Bearer ", "token="]),
        ),
        max_size=10,
    )
)
def test_idempotent_on_glued_fragments(parts: list[str]) -> None:
    once = redact("".join(parts))
    assert redact(once) == once


# --- no catastrophic backtracking (timings live in bench/redaction_speed.py) -------------

_BACKTRACKING = {_const.MAX_REPEAT, _const.MIN_REPEAT}


def _nested_repeats(items: Any, inside: bool = False) -> int:
    """How many unbounded backtracking repeats sit inside another one (`(?:[A-Z]+x*)+`).

    That is the shape whose match time grows exponentially with the input; a possessive
    repeat cannot backtrack into its iterations. Atomic groups and lookarounds are walked
    like any group: what fails inside them still backtracks inside them.
    """
    found = 0
    for op, av in items:
        if op in _BACKTRACKING or op is _const.POSSESSIVE_REPEAT:
            _low, high, sub = av
            unbounded = op in _BACKTRACKING and high is _const.MAXREPEAT
            found += int(unbounded and inside) + _nested_repeats(sub, inside or unbounded)
        elif op is _const.SUBPATTERN:
            found += _nested_repeats(av[-1], inside)
        elif op is _const.BRANCH:
            found += sum(_nested_repeats(branch, inside) for branch in av[1])
        elif op is _const.ATOMIC_GROUP:
            found += _nested_repeats(av, inside)
        elif op in (_const.ASSERT, _const.ASSERT_NOT):
            found += _nested_repeats(av[1], inside)
    return found


def _every_pattern() -> list[tuple[str, str | bytes, int]]:
    rules = redact_module._gate().rules
    found = [(rule.kind, *rule.pattern._args) for rule in rules]
    found += [(f"{rule.kind} ({what})", *pattern._args) for rule in rules
              for what, pattern in (("gate", rule.gate), ("lead", rule.lead))
              if pattern is not None]
    found += [(name, value.pattern, value.flags) for name, value in vars(redact_module).items()
              if isinstance(value, re.Pattern)]
    return found


def test_the_nesting_check_sees_nested_backtracking() -> None:
    assert _nested_repeats(_parser.parse(r"[A-Z]+[a-z]+(?:[A-Z]+[a-z]*)+")) == 2
    assert _nested_repeats(_parser.parse(r"(?:a|b+)*c")) == 1
    assert _nested_repeats(_parser.parse(r"[A-Z]++[a-z]++(?:[A-Z]++[a-z]*+)++")) == 0
    assert _nested_repeats(_parser.parse(r"(?>(?:a+)*b)|(?=(?:b+)+c)")) == 2
    assert _nested_repeats(_parser.parse(r"(?:a++)*(?:b*+c)+")) == 0
    assert _nested_repeats(_parser.parse(r"(?:a{1,5})+")) == 0


@pytest.mark.parametrize("name,pattern,flags", _every_pattern(),
                         ids=lambda v: v if isinstance(v, str) and len(v) < 40 else "")
def test_no_rule_nests_backtracking_repeats(name: str, pattern: str | bytes, flags: int) -> None:
    assert _nested_repeats(_parser.parse(pattern, flags)) == 0, (name, pattern)


def test_the_exponential_shape_that_was_there_redacts() -> None:
    # `[A-Z]+[a-z]+(?:[A-Z]+[a-z]*)+` (PascalCase type names) took 3.7 s on 26 capitals and
    # doubled with each one more; possessive repeats make it one pass.
    value = "Aa" + "A" * 200 + "1"
    assert redact(f"password={value}") == "password=[REDACTED:password]"
    assert redact(f"the token is {value} now") == "the token is [REDACTED:prose_secret] now"


def _one_megabyte_note() -> str:
    rng = random.Random(7)
    filler = [
        "The indexer rebuilds the search index when a note changes.",
        "def get_token(self) -> str:  # returns the cached token",
        "password reset flow uses a signed link that expires in 15 minutes",
        "commit 3f9c2a7e5b1d4c8e9f0a6b2c3d4e5f60718293a4 touched src/auth/token_store.py",
        "| key | value |\n|-----|-------|\n| timeout | 30s |",
        "token = get_token()  # never log it",
    ]
    secrets = [before + secret + after for _kind, before, secret, after in KIND_CASES]
    lines: list[str] = []
    size = 0
    while size < 1_000_000:
        line = rng.choice(secrets) if rng.random() < 0.02 else rng.choice(filler)
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def test_one_megabyte_note_keeps_prose_and_loses_every_secret() -> None:
    text = _one_megabyte_note()
    assert len(text) >= 1_000_000
    out = redact(text)
    for _kind, _before, secret, _after in KIND_CASES:
        assert secret not in out
    assert "password reset flow uses a signed link" in out
    assert "token = get_token()  # never log it" in out
    assert "3f9c2a7e5b1d4c8e9f0a6b2c3d4e5f60718293a4" in out


@pytest.mark.parametrize(
    "unit,expected",
    [
        ("eyJ", None), ("_eyJ", None), ("x:", None), ("a_", None), ("=", None),
        ("Bearer .", None), ("sk-", None), ("_aws_secret", None),
        ('password: "', 'password: "[REDACTED:password]"password: "[REDACTED:password]"'),
        ("-----BEGIN PRIVATE KEY-----", "[REDACTED:private_key]"),
        ("token=", "token=[REDACTED:password]"),
        ("token: a ", None),
    ],
    ids=lambda v: repr(v[:12]) if isinstance(v, str) else "",
)
def test_adversarial_inputs_redact_to_what_they_hold(unit: str, expected: str | None) -> None:
    # Built to make a regex rescan the text at every offset; bench/redaction_speed.py times
    # them at growing sizes. Here: what comes out, and that a second pass changes nothing.
    text = unit * (200_000 // len(unit))
    out = redact(text)
    if expected is None:
        assert out == text
    else:
        assert out.startswith(expected)
    assert redact(out) == out
