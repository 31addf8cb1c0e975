"""Secret redaction for note text: API keys, tokens, private keys and passwords become
`[REDACTED:<kind>]` before anything is written to the vault.

Design notes:

* Every rule is its own precompiled regex that starts with a literal or a small set of
  literals, so `re` skips ahead with its prefix scan instead of trying every offset; case
  variants are spelled out (`token|Token|TOKEN`) because `(?i)` disables that fast path.
  Repetitions are possessive or over classes that cannot match what follows, so each scan is
  linear; a 1 MB note redacts in well under a second.
* Rules report the span of the secret only, never the key or the quotes around it, so
  `DB_PASSWORD=hunter2x` keeps `DB_PASSWORD=` and the note stays readable.
* Overlapping hits (a JWT inside a `Bearer` header, an `sk-...` key assigned to `API_KEY=`)
  are merged, so no byte that any rule considered secret survives.
* Idempotence, `redact(redact(x)) == redact(x)`: markers are never re-matched (the value
  classes exclude `[` and `]`, and any hit touching an existing `[REDACTED:...]` is dropped),
  and `find_secrets` rescans its own output until nothing new appears, because redacting one
  secret can change the context of a neighbour glued to it.
* Generic rules (assignments, bare `Bearer`) carry a check that rejects values which read as
  code or placeholders (`get_token()`, `self.token`, `${TOKEN}`, `password: str`), because a
  memory store full of false markers is nearly as useless as one that leaks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from itertools import compress, repeat
from typing import Any

from .vendor_tokens import VENDOR_TOKENS

# Kinds detected by the rules below (the marker names them).
REDACTION_KINDS: tuple[str, ...] = (
    "private_key", "putty_private_key", "aws_access_key", "aws_secret_key", "github_token",
    "anthropic_key", "openai_key", "slack_token", "slack_webhook", "stripe_key",
    "google_api_key", "google_oauth_secret", "gitlab_token", "npm_token", "huggingface_token",
    "sendgrid_key", "pypi_token", "mailgun_key", "telegram_bot_token", "discord_bot_token",
    "jwt", "basic_auth", "bearer_token", "azure_storage_key", "azure_sas_token",
    "url_credentials", "curl_auth_user", "cli_password", "netrc_password", "password",
    "prose_secret", "azure_ad_client_secret", "hashicorp_tf_api_token",
    "airtable_personal_access_token", "rails_secret_key_base", "laravel_app_key",
    "datadog_key", "algolia_key", "azure_devops_pat", "authorization_token", "okta_api_token",
    "api_key_header", "cookie", "pgpass_password", "npm_auth", "docker_auth",
    "kubernetes_secret", "discord_webhook", "teams_webhook", "aws_presigned_signature",
    "azure_function_key", "firebase_fcm_key", "wandb_api_key", "kaggle_key",
    "mailchimp_api_key", "braintree_access_token",
) + tuple(dict.fromkeys(kind for kind, *_ in VENDOR_TOKENS))  # fmt: skip

_MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
_HAS_DIGIT = re.compile(r"[0-9]")
_HAS_UPPER = re.compile(r"[A-Z]")
_HAS_LOWER = re.compile(r"[a-z]")


def _casings(*words: str) -> str:
    """`token|Token|TOKEN` for each word: lower, camelCase/Title and CONSTANT_CASE spellings."""
    variants = [v for w in words for v in (w, w.capitalize(), w.upper())]
    return "|".join(sorted(variants, key=len, reverse=True))


class _LazyPattern:
    """A regex compiled on first use: a hook that redacts one prompt compiles only the rules
    whose keywords occur in it, not all of them at import. The first use makes the compiled
    pattern's methods attributes of this object, so later uses do not come through here."""

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._args: tuple[Any, int] = (pattern, flags)  # (a `str` or a `bytes` pattern)

    def __getattr__(self, name: str) -> Any:
        compiled = re.compile(*self._args)
        self.match, self.search = compiled.match, compiled.search
        self.finditer, self.groupindex = compiled.finditer, compiled.groupindex
        return getattr(compiled, name)


def _token(prefix: str, rest: str, word_chars: str = "A-Za-z0-9") -> _LazyPattern:
    """`prefix` + `rest`, where the prefix must not be the tail of a longer word.

    The boundary is a lookbehind placed *after* the fixed-width prefix: a pattern that starts
    with a lookbehind loses `re`'s prefix scan and is tried at every offset, and a boundary
    checked only after the match would make `eyJeyJeyJ...` quadratic.
    """
    return _LazyPattern(f"{prefix}(?<![{word_chars}]{prefix}){rest}")


# Lower-case literals at least one of which every hit of a kind contains: a rule runs only on
# text holding one (found for all rules at once, see `_gate`). Kinds not listed always run.
_OWN_KEYWORDS: dict[str, tuple[str, ...]] = {
    "private_key": ("private key",),
    "putty_private_key": ("putty-user-key-file-",),
    "aws_access_key": ("akia", "asia"),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "anthropic_key": ("sk-ant-",),
    "openai_key": ("sk-",),
    "slack_token": ("xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "xoxe-"),
    "slack_webhook": ("hooks.slack.com/",),
    "stripe_key": ("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_",
                   "whsec_"),
    "google_oauth_secret": ("gocspx-",),
    "mailgun_key": ("key-",),
    "telegram_bot_token": (":aa",),
    "basic_auth": ("authorization",),
    "azure_storage_key": ("accountkey=", "accesskey="),
    "azure_sas_token": ("sig=",),
    "google_api_key": ("aiza",),
    "gitlab_token": ("glpat-", "gldt-", "glptt-", "glrt-"),
    "npm_token": ("npm_",),
    "huggingface_token": ("hf_",),
    "sendgrid_key": ("sg.",),
    "pypi_token": ("pypi-agei", "pypi-agen"),
    "jwt": ("eyj",),
    "bearer_token": ("bearer",),
    "url_credentials": ("://",),
    "curl_auth_user": ("curl",),
    "netrc_password": ("machine", "default"),
    "password": ("pass", "pwd", "secret", "token", "key"),
    "prose_secret": ("pass", "pwd", "pin", "secret", "token", "key"),
}  # fmt: skip


class _Rule:
    """One detector: a precompiled regex whose group `s` (or whole match) is the secret."""

    def __init__(self, kind: str, pattern: _LazyPattern,
                 keywords: tuple[str, ...] | None = None, anchored: bool = False,
                 gate: _LazyPattern | None = None, lead: _LazyPattern | None = None) -> None:
        self.kind = kind
        self.pattern = pattern
        # A cheap bytes pattern that the lowered text (`_lowered`) holds wherever the rule has
        # a match: where it is not found, the rule is not run (its own pattern may be tried at
        # every offset, or at hundreds of keywords that start ordinary words).
        self.gate = gate
        self.keywords: tuple[str, ...] = _OWN_KEYWORDS.get(kind, ()) if keywords is None \
            else keywords
        # Every match starts at one of the keywords: tried only there, not at every offset
        # (the generic rules start with an alternation, which `re` cannot skip ahead to).
        self.anchored = anchored
        # What every match of an anchored rule starts with, cheaper to try: keywords where it
        # does not match are not tried (rules with the same keywords and lead share that).
        self.lead = lead

    def accept(self, text: str, m: re.Match[str]) -> bool:
        return True

    def matches(self, text: str, starts: _Starts | None) -> Iterator[re.Match[str]]:
        if not self.anchored or starts is None or starts.dense:
            return self.pattern.finditer(text)
        return filter(None, map(self.pattern.match, repeat(text), starts.tried(text, self.lead)))

    def spans(self, text: str, starts: _Starts | None = None) -> list[tuple[int, int]]:
        group = "s" if "s" in self.pattern.groupindex else 0
        return [m.span(group) for m in self.matches(text, starts) if self.accept(text, m)]


class _Starts:
    """Where an anchored rule's keywords occur in one text: every occurrence (how many tells
    whether they are dense), and per lead the distinct positions where it matches, found once
    for all the rules that share these keywords."""

    def __init__(self, every: list[int], text_length: int) -> None:
        self.every = every
        # Where keywords are dense, one scan in C beats a Python-level match per keyword.
        self.dense = len(every) * 16 > text_length
        self._tried: dict[_LazyPattern | None, list[int]] = {}

    def tried(self, text: str, lead: _LazyPattern | None) -> list[int]:
        positions = self._tried.get(lead)
        if positions is None:
            positions = sorted(set(self.every))
            if lead is not None:
                positions = list(compress(positions, map(lead.match, repeat(text), positions)))
            self._tried[lead] = positions
        return positions


class _OpenAIRule(_Rule):
    def accept(self, text: str, m: re.Match[str]) -> bool:
        # Real keys are random base62 and contain a digit; long hyphenated names such as
        # `sk-learn-contrib-imbalanced` do not.
        return _HAS_DIGIT.search(m.group()) is not None


class _BareBearerRule(_Rule):
    def accept(self, text: str, m: re.Match[str]) -> bool:
        # Outside an `Authorization:` header "Bearer" is often just English, so the token has
        # to look machine-made; `Bearer YOUR_ACCESS_TOKEN` style placeholders do not.
        token = m.group("s")
        if _HAS_DIGIT.search(token):
            return True
        return _HAS_UPPER.search(token) is not None and _HAS_LOWER.search(token) is not None


# --- assignment-style secrets: `key <sep> value` -------------------------------------------

# Only the last word of the key is matched by the regex (`DB_PASSWORD` -> `PASSWORD`,
# `clientSecret` -> `Secret`); whatever precedes it stays untouched in the output anyway.
_KEY_WORDS = _casings("password", "passwd", "passphrase", "pass", "pwd", "secret", "token", "key")
_KEYWORD = "(?P<key>" + _KEY_WORDS + ")"
# `key` alone is far too common (`key = "user:42"`); it counts only as `api_key`, `secretKey`...
_KEY_QUALIFIER_RE = re.compile(
    r"(?i:api|secret|access|private|signing|encryption|master|auth|client)[_-]?\Z"
)
# Optional closing quote of a JSON/dict key, then `=`, `:`, `:=`, `=>`, or the annotated form
# `name: type = value`. `==`/`===` are comparisons, not assignments.
_KEY_AND_SEP = (
    _KEYWORD
    + r"[\"']?[ \t]*+"
    + r"(?P<sep>:=|=>|=(?![=>])|:(?!:)(?:[ \t]*+[A-Za-z_][\w.\[\]|, ]{0,80}+=(?![=>]))?)"
    + r"[ \t]*+"
)
# How `_KEY_AND_SEP` starts: the keyword, then the first character of its separator.
_KEY_AND_SEP_LEAD = _LazyPattern("(?:" + _KEY_WORDS + r")[\"']?[ \t]*+[:=]")
# Quoted values allow backslash escapes; the unrolled loop keeps it linear.
_DQ_VALUE = r"\"(?P<s>[^\"\\\n]*+(?:\\.[^\"\\\n]*+)*+)\""
_SQ_VALUE = r"'(?P<s>[^'\\\n]*+(?:\\.[^'\\\n]*+)*+)'"
# Unquoted values stop at whitespace and at characters that end a value in env files, query
# strings and connection strings.
_BARE_CHARS = r"[^\s\"'`,;&|()\[\]{}<>]"
_BARE_RUN_RE = re.compile(_BARE_CHARS + "++")

# Values that are types, literals or plain words, as in `password: str`, `token: string;`,
# `password = None`, `secret: required`.
_NON_SECRET_VALUES = frozenset(
    {
        "none", "null", "nil", "true", "false", "undefined", "str", "string", "bytes",
        "bytearray", "int", "integer", "number", "bool", "boolean", "any", "optional",
        "secretstr", "secretbytes", "text", "varchar", "char", "required", "object",
        "unknown", "redacted", "hidden", "masked", "omitted", "empty", "bearer", "basic",
    }
)  # fmt: skip
# Template/env references and masks: `${X}`, `$(cmd)`, `$X`, `{{ secrets.X }}`, `{% x %}`,
# `%(password)s`, `<your-token>`, `{password}`, `******`, `xxxxxx`.
_PLACEHOLDER_RE = re.compile(
    r"\$\{|\$\(|\{\{|\{%|%\(|\$[A-Za-z_]\w*\Z|<[^<>]*>\Z|\{[A-Za-z_][\w.]*\}\Z"
    r"|[*\u2022]+\Z|[xX]+\Z|\.+\Z"
)
# Unquoted values that read as code rather than a literal: `self.token`, `config.api_key`,
# `new_password`, `DEFAULT_TOKEN`, `userPassword`. Letters only, so `hunter2_x` still counts.
_CODE_VALUE_RE = re.compile(
    r"[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)++"
    r"|[a-z]++(?:_[a-z]++)++"
    r"|[A-Z]++(?:_[A-Z]++)++"
    r"|[a-z]++(?:[A-Z][a-z]++)++"
    r"|[A-Z]++[a-z]++(?:[A-Z]++[a-z]*+)++"  # PascalCase type names: `RefreshTokenT`, `DHPrivateKey`
)
_IDENTIFIER_RE = re.compile(r"[A-Za-z_]++")
# Kebab-case names (`tls-secret`), colours (`#dddddd`), camel and Pascal case words
# (`challengePassword`, `RefreshToken`): names, not secrets.
_NOT_A_SECRET_RE = re.compile(
    r"[a-z]++(?:-[a-z]++)++|#[0-9A-Fa-f]{3,8}|[a-z]++(?:[A-Z][a-z]++)++|(?:[A-Z]++[a-z]++){2,}")
_NUMBER_RE = re.compile(r"[0-9][0-9_.,]*+")
_CODE_IDENTIFIER_RE = re.compile(r"[A-Za-z_]++|[a-z_][a-z0-9]*+(?:_[a-z0-9]++)++")
# After `key: value` (YAML, headers, object literals) the value must end the line or field;
# otherwise prose such as `Token: refreshed every hour` would be redacted.
_COLON_VALUE_END_RE = re.compile(r"[ \t]*+(?:[,;]?[ \t]*+(?:\r?\n|\Z|#|//)|[}\]])")


def _key_is_secret_name(text: str, m: re.Match[str]) -> bool:
    key = m.group("key")
    start = m.start("key")
    before = text[start - 1] if start else ""
    lowered = key.lower()
    if lowered == "pass":
        # DB_PASS, dbPass and PASS count; bypass, compass and BYPASS do not.
        if key == "Pass":
            return not before.isupper()
        return not before.isalpha()
    if lowered == "key":
        return _KEY_QUALIFIER_RE.search(text, max(0, start - 12), start) is not None
    return True


def _plausible_value(value: str) -> bool:
    if len(value) < 6 or value.startswith("[REDACTED:") or _NOT_A_SECRET_RE.fullmatch(value):
        return False
    return value.strip().lower() not in _NON_SECRET_VALUES and not _PLACEHOLDER_RE.match(value)


class _QuotedAssignmentRule(_Rule):
    """`key = "value"`: inside quotes a value is a literal, so only placeholders are spared."""

    def accept(self, text: str, m: re.Match[str]) -> bool:
        return _plausible_value(m.group("s")) and _key_is_secret_name(text, m)


class _BareAssignmentRule(_Rule):
    """`key=value` without quotes, as in env files, YAML, INI, query and connection strings.

    The regex stops at the separator and the value's extent is found here. A value can hold
    another assignment (`bypass=token=hunter2x`) and must not be consumed before the inner one
    is seen. Every start inside one run of value characters shares that run's end, so the end
    and the checks on what follows it are computed once per run, and the per-value checks are
    regexes over `text[start:end]` in place that stop at the first separator: that keeps
    `token=token=token=...` linear instead of rescanning every suffix.
    """

    def spans(self, text: str, starts: _Starts | None = None) -> list[tuple[int, int]]:
        found: list[tuple[int, int]] = []
        run_start = run_end = -1
        call_follows = False
        field_ends: bool | None = None
        run_taken = False
        for m in self.matches(text, starts):
            start = m.end()
            if not run_start <= start < run_end:
                run = _BARE_RUN_RE.match(text, start)
                run_start, run_end = start, (run.end() if run else start + 1)
                # A call or subscript follows: `token = get_token()`, `os.environ["KEY"]`.
                call_follows = text[run_end : run_end + 1] in ("(", "[")
                field_ends = None
                run_taken = False
            # Inside a run already redacted to its end, an inner assignment adds nothing.
            if run_taken or call_follows or run_end - start < 6:
                continue
            if not _key_is_secret_name(text, m):
                continue
            sep = m.group("sep")
            if sep == ":":
                if field_ends is None:
                    field_ends = _COLON_VALUE_END_RE.match(text, run_end) is not None
                # `--cred 'PASSWORD: X'`: a spaced `key: value` ending a quoted string also
                # ends its field (an ARN's `secret:Name"` has no space and stays).
                if not field_ends and not (start > m.end("sep")
                                           and text[run_end:run_end + 1] in ("'", '"')):
                    continue
            if self._value_is_literal(text, m, sep, start, run_end) and not (
                # A keyword argument passed on: `password=password,`, `token=tok)`.
                text[run_end : run_end + 1] in (",", ")")
                and _IDENTIFIER_RE.fullmatch(text, start, run_end)):
                found.append((start, run_end))
                run_taken = True
        return found

    @staticmethod
    def _value_is_literal(text: str, m: re.Match[str], sep: str, start: int, end: int) -> bool:
        if end - start <= 16 and text[start:end].lower() in _NON_SECRET_VALUES:
            return False
        if _PLACEHOLDER_RE.match(text, start, end) or _CODE_VALUE_RE.fullmatch(text, start, end):
            return False
        # `PWD=/home/me/project` in an env dump is a path, not a password; `pass: --no-verify`
        # is a flag.
        if text.startswith(("~/", "./", "../", "-"), start) or (text.startswith("/", start) and (
                m.group("key").lower() in ("pwd", "pass") or "/" in text[start + 1:end])):
            return False  # one leading slash after a password key is part of the value
        # `max_token: 100000` is a number; `secret: tls-secret` names a Kubernetes secret.
        if _NUMBER_RE.fullmatch(text, start, end) or _NOT_A_SECRET_RE.fullmatch(text, start, end):
            return False
        if text[start:end].lower() == m.group("key").lower():  # `password=password`
            return False
        # `token = response` / `token = tok_v2`: spaces around `=` mean code, where a
        # lowercase identifier is a variable. `.env` and shell files never put spaces there.
        spaced = text[m.start("sep") - 1] in " \t"
        if spaced and sep in ("=", ":="):
            return _CODE_IDENTIFIER_RE.fullmatch(text, start, end) is None
        return True


# What documentation writes where a password goes: `https://user:pass@host`.
_URL_PLACEHOLDERS = frozenset({"pass", "password", "passwd", "pwd", "pw", "secret", "token",
                               "changeme", "bar", "p", "x"})


class _UrlCredentialsRule(_Rule):
    def accept(self, text: str, m: re.Match[str]) -> bool:
        value = m.group("s")
        return _PLACEHOLDER_RE.match(value) is None and value.lower() not in _URL_PLACEHOLDERS


class _MixedRule(_Rule):
    def accept(self, text: str, m: re.Match[str]) -> bool:
        # Machine-made: a digit, an upper and a lower case letter.
        value = m.group()
        return bool(_HAS_DIGIT.search(value) and _HAS_UPPER.search(value)
                    and _HAS_LOWER.search(value))


# The bot id stands alone, or follows `bot` as in `https://api.telegram.org/bot<token>/getMe`.
_BOT_ID_RE = re.compile(r"(?:(?<=bot)|(?<![A-Za-z0-9_]))[0-9]{8,10}\Z")


class _TelegramRule(_Rule):
    """`123456789:AA...`: found at `:AA` (a literal the scan can skip to), then the bot id
    before it is checked and included."""

    def spans(self, text: str, starts: _Starts | None = None) -> list[tuple[int, int]]:
        found = []
        for m in self.matches(text, starts):
            bot = _BOT_ID_RE.search(text, max(0, m.start() - 11), m.start())
            if bot is not None:
                found.append((bot.start(), m.end()))
        return found


# A command-line value: quoted, or a bare word.
_CLI_VALUE = r"(?:\"(?P<dq>[^\"\n]{4,}+)\"|'(?P<sq>[^'\n]{4,}+)'|(?P<bare>[^\s\"'`;|&()<>]{4,}+))"
# From a tool's name to its flag: within one command, and at most 400 characters on (an
# unbounded look was quadratic in a long line that names the tool many times).
_TO_FLAG = r"\b[^\n|;&]{0,400}?"


class _CurlUserRule(_Rule):
    """`curl ... -u user:password`: found at the flag (a literal), then `curl` looked for
    earlier on the same line, so a line full of `curl` stays linear."""

    def spans(self, text: str, starts: _Starts | None = None) -> list[tuple[int, int]]:
        found = []
        for m in self.matches(text, starts):
            line_start = text.rfind("\n", 0, m.start()) + 1
            if _CURL_RE.search(text, max(line_start, m.start() - 300), m.start()) is None:
                continue
            group = next(g for g in ("dq", "sq", "bare") if m.group(g) is not None)
            user, _, password = m.group(group).partition(":")
            if not _PLACEHOLDER_RE.match(password) and password.lower() not in _URL_PLACEHOLDERS:
                found.append(m.span(group))
        return found


_CURL_RE = re.compile(r"\bcurl\b")


class _CliSecretRule(_Rule):
    def spans(self, text: str, starts: _Starts | None = None) -> list[tuple[int, int]]:
        found = []
        for m in self.matches(text, starts):
            group = next(g for g in ("dq", "sq", "bare") if m.group(g) is not None)
            value = m.group(group)
            if _plausible_value(value) and not value.startswith("-") and not (
                    group == "bare" and (_CODE_VALUE_RE.fullmatch(value)
                                         or _IDENTIFIER_RE.fullmatch(value))):
                found.append(m.span(group))
        return found


_TRAILING_PUNCT_RE = re.compile(r"[.,;:!?)\]]+\Z")


class _ProseSecretRule(_Rule):
    """A secret named in a sentence. Only machine-looking values count (a digit, or upper and
    lower case letters, or a symbol inside), so "the token is expired" stays."""

    def spans(self, text: str, starts: _Starts | None = None) -> list[tuple[int, int]]:
        found = []
        for m in self.matches(text, starts):
            key = m.group()[: m.start("s") - m.start()].split()[0]
            if key.lower() == "key" and _KEY_QUALIFIER_RE.search(
                    text, max(0, m.start() - 12), m.start()) is None:
                word = text[max(0, m.start() - 12) : m.start()].split()
                if not word or word[-1].lower() not in ("secret", "access", "api", "private"):
                    continue
            start, end = m.span("s")
            trail = _TRAILING_PUNCT_RE.search(text, start, end)
            if trail is not None:
                end = trail.start()
            value = text[start:end]
            if len(value) < 6 or not _plausible_value(value) or _CODE_VALUE_RE.fullmatch(value):
                continue
            if _HAS_DIGIT.search(value) or (_HAS_UPPER.search(value) and _HAS_LOWER.search(
                    value[1:])) or re.search(r"[^A-Za-z0-9]", value):
                found.append((start, end))
        return found


_PROSE_WORDS = "(?:" + _casings("password", "passphrase", "passwd", "pwd", "pin", "token", "secret",
                               "key") + ")"  # fmt: skip
_BEARER_TOKEN = r"(?P<s>[A-Za-z0-9._~+/-]{15,}[A-Za-z0-9_~+/-]=*+)"

# On an exact tie (same span) the earlier rule names the marker, so specific kinds come before
# the generic `bearer_token` / `password` rules.
_RULES: tuple[_Rule, ...] = (
    _Rule(
        "private_key",
        # A BEGIN line whose END is missing redacts to the end of the text: a truncated key is
        # still a key.
        _LazyPattern(
            r"-----BEGIN (?:[A-Z0-9]++ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END (?:[A-Z0-9]++ )*PRIVATE KEY(?: BLOCK)?-----|.*)",
            re.DOTALL,
        ),
    ),
    _Rule("aws_access_key", _token("(?:AKIA|ASIA)", "[A-Z0-9]{16}(?![A-Za-z0-9])", "A-Za-z0-9")),
    _Rule(
        "aws_secret_key",
        _LazyPattern(
            r"(?:aws|AWS|Aws)[_-]?(?:secret|SECRET|Secret)[A-Za-z_]{0,40}+[\"']?[ \t]*+"
            r"(?::=|=>|=|:)[ \t]*+[\"']?(?P<s>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        keywords=("awssecret", "aws_secret", "aws-secret"),
    ),
    _Rule(
        "aws_secret_key",
        # The JSON that `aws sts` / `aws iam create-access-key` print.
        _LazyPattern(
            r"(?:SecretAccessKey|secret_access_key|SECRET_ACCESS_KEY)[\"']?[ \t]*+"
            r"(?::=|=>|=|:)[ \t]*+[\"']?(?P<s>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        keywords=("secretaccesskey", "secret_access_key"),
    ),
    # GitHub's token alphabet is `[A-Za-z0-9_]` (docs/secrets.md): an underscore in the body
    # must not end the token.
    _Rule("github_token", _token("gh[pousr]_", "[A-Za-z0-9_]{36,}+")),
    _Rule("github_token", _token("github_pat_", "[A-Za-z0-9_]{30,}+")),
    _Rule("anthropic_key", _token("sk-ant-", "[A-Za-z0-9_-]{20,}+")),
    _OpenAIRule("openai_key", _token("sk-", "(?!ant-)[A-Za-z0-9_-]{20,}+", "A-Za-z0-9_-")),
    _Rule("slack_token", _token("xox[abprse]-", "[A-Za-z0-9-]{10,}+")),
    _Rule(
        "slack_webhook",
        # The scheme stays, like the host of `url_credentials`; the URL itself is the secret.
        _token(
            "hooks",
            r"\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{8,}+",
            "A-Za-z0-9.-",
        ),
    ),
    _Rule("stripe_key", _token("(?:sk|rk)_(?:live|test|prod)_", "[A-Za-z0-9]{16,}+")),
    _Rule("stripe_key", _token("whsec_", "[A-Za-z0-9]{24,}+")),
    _Rule("google_oauth_secret", _token("GOCSPX-", "[A-Za-z0-9_-]{24,}+")),
    _Rule("mailgun_key", _token("key-", "[0-9a-f]{32}(?![A-Za-z0-9_-])")),
    _TelegramRule("telegram_bot_token", _LazyPattern(r":AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])")),
    _MixedRule(
        "discord_bot_token",
        _token("[MNO]", r"[A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}+"),
        gate=_LazyPattern(rb"\.[a-z0-9_-]{6}\."),
    ),
    _Rule(
        "putty_private_key",
        # Everything from the header to the MAC line; a key cut short goes to the end.
        _LazyPattern(r"PuTTY-User-Key-File-\d+:(?:.*?Private-MAC:[ \t]*+[0-9A-Fa-f]++|.*)",
                   re.DOTALL),
    ),
    _Rule(
        "basic_auth",
        _LazyPattern(
            r"(?:Authorization|authorization|AUTHORIZATION)[\"']?[ \t]*+[:=][ \t]*+[\"']?"
            r"(?:Basic|basic|BASIC)[ \t]++(?P<s>[A-Za-z0-9+/]{8,}+=*+)"
        ),
    ),
    _Rule(
        "azure_storage_key",
        # Connection strings: `AccountKey=...;`, `SharedAccessKey=...`.
        _LazyPattern(r"(?:Account|SharedAccess|Access)Key=(?P<s>[A-Za-z0-9+/]{20,}+=*+)"),
    ),
    _Rule(
        "azure_sas_token",
        # The signature of a shared access signature URL (`...&sp=r&sig=...`); Logic Apps and
        # Teams workflow callback URLs sign with base64url (`-`, `_`).
        _LazyPattern(r"sig=(?<=[?&;]sig=)(?P<s>[A-Za-z0-9%+/_-]{20,}+=*+)"),
    ),
    # `--password hunter2`, `--token=...`, `-pPASS` of MySQL, `-p PASS` of docker/sshpass.
    _CliSecretRule(
        "cli_password",
        _LazyPattern(r"--(?:password|passwd|pass|token|api-key|apikey|secret|client-secret"
                   r"|access-token|auth-token|cred|creds|credential|credentials)(?:=|[ \t]++)"
                   + _CLI_VALUE),
        ("--pass", "--token", "--api", "--secret", "--client-secret", "--access-token",
         "--auth-token", "--cred"), anchored=True,
    ),
    _CliSecretRule(
        "cli_password",
        _LazyPattern(r"(?:mysql|mysqldump|mysqladmin|mariadb)" + _TO_FLAG + r"[ \t]-p(?=[^\s-])"
                   + _CLI_VALUE),
        ("mysql", "mariadb"), anchored=True, gate=_LazyPattern(rb"-p(?<=[ \t]-p)"),
    ),
    _CliSecretRule(
        "cli_password",
        _LazyPattern(r"(?:(?:docker|podman|nerdctl)[ \t]++login|helm[ \t]++registry[ \t]++login"
                   r"|sshpass)" + _TO_FLAG + r"[ \t]-p[ \t]++"
                   + _CLI_VALUE),
        ("docker", "podman", "nerdctl", "helm", "sshpass"), anchored=True,
        gate=_LazyPattern(rb"-p(?<=[ \t]-p)[ \t]"),
    ),
    _CurlUserRule(
        "curl_auth_user",
        _LazyPattern(r"-(?:u(?<=[ \t]-u)|-user(?<=[ \t]--user))(?:=|[ \t]++)"
                   r"(?:\"(?P<dq>[^\"\n:]*+:[^\"\n]{3,}+)\"|'(?P<sq>[^'\n:]*+:[^'\n]{3,}+)'"
                   r"|(?P<bare>[^\s\"':]*+:[^\s\"']{3,}+))"),
    ),
    _CliSecretRule(
        "netrc_password",
        _LazyPattern(r"(?:machine[ \t]++\S++|default)\s++(?:login[ \t]++\S++\s++)?password[ \t]++"
                   + _CLI_VALUE),
        anchored=True, gate=_LazyPattern(rb"password[ \t]"),
        lead=_LazyPattern(r"machine[ \t]|default\s"),
    ),
    _Rule("google_api_key", _token("AIza", "[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])")),
    # A routable token (GitLab 17.x+) carries `.<version>.<crc>` after its payload.
    _Rule("gitlab_token", _token("gl", "(?:pat|dt|ptt|rt)-[A-Za-z0-9_-]{20,}+"
                                       r"(?:\.[0-9A-Za-z]++){0,2}+")),
    _Rule("npm_token", _token("npm_", "[A-Za-z0-9]{36}(?![A-Za-z0-9])")),
    _Rule("huggingface_token", _token("hf_", "[A-Za-z0-9]{34,}+")),
    _Rule(
        "sendgrid_key",
        _token(r"SG\.", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])"),
    ),
    # Macaroons located at `pypi.org`, or at `test.pypi.org` for TestPyPI.
    _Rule("pypi_token", _token("pypi-", "AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)"
                                        "[A-Za-z0-9_-]{50,}+")),
    # The boundary must hold every character of the body, or `_eyJ_eyJ...` is quadratic.
    _Rule("jwt", _token("eyJ", r"[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+",
                        "A-Za-z0-9_-")),
    _Rule(
        "bearer_token",
        # Inside a real Authorization header any token counts, placeholder-looking or not.
        _LazyPattern(
            r"(?:Authorization|authorization|AUTHORIZATION)[\"']?[ \t]*+[:=][ \t]*+[\"']?"
            r"(?:Bearer|bearer|BEARER)[ \t]++" + _BEARER_TOKEN
        ),
    ),
    _BareBearerRule(
        "bearer_token",
        _token("(?:Bearer|bearer|BEARER)", r"[ \t]++" + _BEARER_TOKEN, "A-Za-z0-9"),
    ),
    _UrlCredentialsRule(
        "url_credentials",
        # scheme://user:PASSWORD@host: only the password goes, user and host stay readable.
        # Anchored on `://` so ports (`host:8080/`) never look like passwords.
        _LazyPattern(r"://[^\s:/@?#\[\]\"'<>]*+:(?P<s>[^\s/@?#\[\]\"'<>{}]++)@(?=[^\s/@])"),
    ),
    _QuotedAssignmentRule("password", _LazyPattern(_KEY_AND_SEP + _DQ_VALUE), anchored=True,
                          lead=_KEY_AND_SEP_LEAD),
    _QuotedAssignmentRule("password", _LazyPattern(_KEY_AND_SEP + _SQ_VALUE), anchored=True,
                          lead=_KEY_AND_SEP_LEAD),
    _BareAssignmentRule("password", _LazyPattern(_KEY_AND_SEP + f"(?={_BARE_CHARS})"),
                        anchored=True, lead=_KEY_AND_SEP_LEAD),
    _ProseSecretRule(
        "prose_secret",
        # "the password is hunter2", "AWS secret key is ...", "token was: ...".
        _LazyPattern(_PROSE_WORDS
                     + r"[ \t]++(?:(?:is|was)[ \t:]*+(?:set[ \t]++to[ \t]++)?|:[ \t]*+)"
                     r"[\"'`]?(?P<s>[^\s\"'`]{6,}+)"),
        anchored=True, lead=_LazyPattern(_PROSE_WORDS + r"[ \t]++(?:is|was|:)"),
    ),
)


# Vendor tokens known by their prefix (vendor_tokens.py), each run only where its prefix occurs.
_VENDOR_RULES: tuple[_Rule, ...] = tuple(
    _Rule(kind, _token(re.escape(prefix), f"[{body}]{{{shortest},}}+"),
          keywords=(prefix.lower(),))
    for kind, prefixes, body, shortest in VENDOR_TOKENS for prefix in prefixes) + (
    # Azure AD client secrets: three characters, a digit, `Q~`, then 31-34 more.
    _Rule("azure_ad_client_secret", _LazyPattern(
        r"(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}+"
        r"(?![A-Za-z0-9_~.\-])"), keywords=("q~",)),
    # HashiCorp Terraform Cloud API tokens: 14 characters, `.atlasv1.`, then 60 or more.
    _Rule("hashicorp_tf_api_token", _LazyPattern(
        r"(?<![A-Za-z0-9])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}+"),
          keywords=("atlasv1",)),
    # Airtable personal access tokens: `pat`, 14 characters, a dot, 64 hex digits.
    _Rule("airtable_personal_access_token",
          _token("pat", r"[A-Za-z0-9]{14}\.[a-f0-9]{64}(?![A-Za-z0-9])"), keywords=("pat",)),
)


class _KubernetesSecretRule(_Rule):
    """The values of a Kubernetes Secret's `data:` / `stringData:` block, when the text names
    `kind: Secret` (a manifest, `kubectl get secret -o yaml`): every more-indented
    `name: value` line after the block's key, or, on one line (a title, a flattened note),
    the `name: base64` pairs right after it."""

    def spans(self, text: str, starts: _Starts | None = None) -> list[tuple[int, int]]:
        if _K8S_KIND_RE.search(text) is None:
            return []
        found = []
        for m in self.matches(text, starts):
            line_start = text.rfind("\n", 0, m.start()) + 1
            line_end = text.find("\n", m.end())
            line_end = len(text) if line_end < 0 else line_end
            prefix = text[line_start:m.start()]
            if text[m.end():line_end].strip():
                pos = m.end()
                while (pair := _INLINE_PAIR_RE.match(text, pos)) is not None:
                    found.append(pair.span("s"))
                    pos = pair.end()
                continue
            if prefix.strip():
                continue  # `the data:` in prose, not a YAML key
            pos = line_end + 1
            for line in _YAML_LINE_RE.finditer(text, pos):
                if line.start() != pos or len(line.group("indent")) <= len(prefix):
                    break
                pos = line.end() + 1
                if line.group("s"):
                    found.append(line.span("s"))
        return found


_INLINE_PAIR_RE = re.compile(r"[ \t]++[\w.-]++:[ \t]*+(?P<s>[A-Za-z0-9+/]{4,}+=*+)(?![^\s])")
class _KaggleRule(_Rule):
    def accept(self, text: str, m: re.Match[str]) -> bool:
        # kaggle.json: `{"username":"...","key":"<32 hex>"}`; any other JSON "key" is a name.
        return not m.group().startswith('"') or '"username"' in text[max(0, m.start() - 200):
                                                                      m.start()]


_K8S_KIND_RE = re.compile(r"kind:[ \t]*+[\"']?Secret\b")
_YAML_LINE_RE = re.compile(r"(?P<indent>[ \t]*+)[^\s:#][^:\n]*+:[ \t]*+"
                           r"(?:[|>][-+]?[ \t]*+)?[\"']?(?P<s>[^\s\"'#][^\n\"']*+)?[^\n]*+")


# Base64 of the first bytes of a PEM private key (`-----BEGIN RSA PRIVATE KEY`), as
# Kubernetes `tls.key` and kubeconfig `client-key-data` hold it.
_PEM_B64 = "LS0tLS1CRUdJTi"
_B64_KEY_HEADS = ("BSU0EgUFJJVkFURSBLRVkt", "BQUklWQVRFIEtFWS0t", "BFQyBQUklWQVRFIEtFWS0t",
                  "BPUEVOU1NIIFBSSVZBVEUgS0VZ", "BFTkNSWVBURUQgUFJJVkFURSBLRVkt",
                  "BEU0EgUFJJVkFURSBLRVkt")
_ASSIGN = r"[\"']?[ \t]*+[:=][ \t]*+[\"']?"
# A cookie value (RFC 6265): cookie-octets, bare or inside one pair of double quotes.
_COOKIE_VALUE = r"(?:\"[^\s;\"'\\,]*+\"|[^\s;\"'\\]*+)"

# Kinds from the vendors' published formats (issue #31), each anchored on a literal.
_MORE_RULES: tuple[_Rule, ...] = (
    _Rule("rails_secret_key_base", _LazyPattern(
        r"(?:SECRET_KEY_BASE|secret_key_base)" + _ASSIGN + r"(?P<s>[0-9a-fA-F]{64,}+)"),
          keywords=("secret_key_base",)),
    _Rule("laravel_app_key", _LazyPattern(
        r"(?:APP_KEY|app_key|app\.key)" + _ASSIGN + r"(?P<s>base64:[A-Za-z0-9+/]{22,}+=*+)"),
          keywords=("base64:",)),
    # `APP_PREVIOUS_KEYS="base64:...,base64:..."`: every key of the list, commas included.
    _Rule("laravel_app_key", _LazyPattern(
        r"APP_PREVIOUS_KEYS" + _ASSIGN
        + r"(?P<s>base64:[A-Za-z0-9+/]{22,}+=*+(?:,[ \t]*+base64:[A-Za-z0-9+/]{22,}+=*+)*+)"),
          keywords=("app_previous_keys",)),
    _Rule("datadog_key", _LazyPattern(
        r"(?:DD|DATADOG|dd|datadog)[_-](?:APP|APPLICATION|API|app|application|api)[_-]"
        r"(?:KEY|key|Key)" + _ASSIGN + r"(?P<s>[0-9a-fA-F]{32,40})(?![0-9A-Za-z])"),
          keywords=("dd_", "dd-", "datadog_", "datadog-")),
    _Rule("datadog_key", _LazyPattern(
        r"(?:DD|Dd|dd)-(?:APPLICATION|Application|application|API|Api|api)-(?:KEY|Key|key)"
        r"[ \t]*+:[ \t]*+(?P<s>[0-9a-fA-F]{32,40})(?![0-9A-Za-z])"), keywords=("dd-",)),
    _Rule("algolia_key", _LazyPattern(
        r"(?:ALGOLIA|Algolia|algolia)[A-Za-z_-]{0,30}?(?:KEY|Key|key)" + _ASSIGN
        + r"(?P<s>[0-9a-f]{32})(?![0-9A-Za-z])"), keywords=("algolia",)),
    _Rule("azure_devops_pat", _LazyPattern(
        r"(?<![A-Za-z0-9])[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}"
        r"(?![A-Za-z0-9])"), keywords=("azdo",)),
    _Rule("azure_devops_pat", _LazyPattern(
        r"(?:AZURE_DEVOPS|AZDO|ADO|VSTS|SYSTEM_ACCESSTOKEN)[A-Z_]{0,30}+" + _ASSIGN
        + r"(?P<s>[a-z2-7]{52})(?![A-Za-z0-9])"),
          keywords=("azure_devops", "azdo", "ado_", "vsts", "system_accesstoken")),
    _Rule("authorization_token", _LazyPattern(
        r"(?:Authorization|authorization|AUTHORIZATION)[\"']?[ \t]*+[:=][ \t]*+[\"']?"
        r"(?:token|Token|TOKEN|SSWS|Splunk|GenieKey|Key|key)[ \t]++"
        r"(?P<s>[A-Za-z0-9._~+/-]{16,}+=*+)"), keywords=("authorization",)),
    _Rule("okta_api_token", _token("SSWS", r"[ \t]++(?P<s>00[A-Za-z0-9_-]{40})"
                                   r"(?![A-Za-z0-9_-])"), keywords=("ssws",)),
    _Rule("api_key_header", _LazyPattern(
        r"(?<![A-Za-z0-9_-])(?:api-key|Api-Key|API-KEY|API-Key|Ocp-Apim-Subscription-Key|"
        r"ocp-apim-subscription-key|x-functions-key|X-Functions-Key)"
        r"[ \t]*+:[ \t]*+(?P<s>[A-Za-z0-9_.~+/=-]{16,}+)"),
          keywords=("api-key", "subscription-key", "functions-key")),
    # In `Cookie: a=1; sid=…` any pair may carry the session (RFC 6265 lets a value be
    # double-quoted), so the header counts when one of its values has 8 characters or more.
    # The look-ahead is bounded so that `cookie:x;cookie:x;...` stays linear.
    _Rule("cookie", _LazyPattern(
        r"(?:Cookie|cookie|COOKIE)[ \t]*+:[ \t]*+(?P<s>"
        r"(?=(?:[^\s;]{0,400}+;[ \t]*+){0,40}?[^\s;=]{0,400}+="
        r"(?:\"[^\s;\"'\\,]{8,}+\"|[^\s;\"'\\]{8}))"
        r"[A-Za-z0-9_.~%!#$&*+^|-]++=" + _COOKIE_VALUE
        + r"(?:;[ \t]*+[^\s=;\"'\\]++=" + _COOKIE_VALUE + r")*+)"),
          keywords=("cookie",), gate=_LazyPattern(rb"cookie[ \t]*+:")),
    _Rule("cookie", _LazyPattern(
        r"(?:-b(?<=[ \t]-b)|--cookie(?<=[ \t]--cookie))[ \t]++[\"']?(?P<s>[A-Za-z0-9_.~%-]++="
        r"[^\s;\"']{8,}+(?:;[ \t]*+[^\s=;\"']++=[^\s;\"']*+)*+)"), keywords=("-b", "--cookie")),
    _CliSecretRule("cli_password", _LazyPattern(
        r"redis-cli" + _TO_FLAG + r"[ \t](?:-a|--pass)[ \t]++" + _CLI_VALUE),
                   keywords=("redis-cli",), anchored=True),
    _CliSecretRule("cli_password", _LazyPattern(
        r"-pass(?:in|out|word)?[ \t]++[\"']?pass:" + _CLI_VALUE.replace("{4,}", "{1,}")),
                   keywords=("pass:",)),
    _CliSecretRule("cli_password", _LazyPattern(
        r"openssl" + _TO_FLAG + r"[ \t]-k[ \t]++" + _CLI_VALUE),
                   keywords=("openssl",), anchored=True),
    _CliSecretRule("cli_password", _LazyPattern(
        r"(?:az|AZ)[ \t]++login" + _TO_FLAG + r"[ \t]-p[ \t]++" + _CLI_VALUE),
                   keywords=("az ",), anchored=True),
    _Rule("cli_password", _LazyPattern(
        r"(?:sqlplus|SQLPLUS|sqlldr|expdp|impdp|rman)(?:[ \t]++-[A-Za-z]++)*+[ \t]++[\"']?"
        r"[A-Za-z0-9_$#.]++/(?P<s>[^\s@/\\\"']{3,}+)(?=@|[\s\"']|\Z)"),
          keywords=("sqlplus", "sqlldr", "expdp", "impdp", "rman")),
    # SQL*Plus's own `CONN[ECT] user/password[@connect_identifier]`, alone on its line; a
    # password of letters only counts before `@` (`Connect client/server` is prose).
    _Rule("cli_password", _LazyPattern(
        r"(?m)^[ \t]*+(?:SQL>[ \t]*+)?(?:CONN|conn|Conn)(?:ECT|ect)?[ \t]++[A-Za-z0-9_$#.]++/"
        r"(?P<s>(?:(?=[^\s@/\\\"';]*+@)|(?=[A-Za-z_]*+[^A-Za-z_\s@/\\\"';]))"
        r"[^\s@/\\\"';]{3,}+)"
        r"(?=@|[ \t]*+;?[ \t]*+(?:\r?\n|\Z)|[ \t]++(?:AS|as)[ \t])"), keywords=("conn",)),
    _Rule("pgpass_password", _LazyPattern(
        r"(?m)(?:^|(?<=[\s\"'>]))[A-Za-z0-9_.*-]++:(?:[0-9]{1,5}|\*):[A-Za-z0-9_.*-]++:"
        r"[A-Za-z0-9_.@*-]++:(?P<s>(?=[0-9a-fA-F]*+[^\s\"':0-9a-fA-F])(?:[^\s\"':\\]|\\\S){4,}+)"
        r"(?=[\s\"']|\Z)"), keywords=(),
          # (its `:port:database:user:` part, possessive alike; found from each `:`)
          gate=_LazyPattern(rb":(?:[0-9]{1,5}|\*):[a-z0-9_.*-]++:")),
    _Rule("npm_auth", _LazyPattern(
        r"(?:_auth(?<![^\s:\"']_auth)(?:Token)?|_password(?<![^\s:\"']_password))"
        r"=[\"']?(?!\$\{)(?P<s>[^\s\"']{8,}+)"),
          keywords=("_auth", "_password")),
    _Rule("docker_auth", _LazyPattern(
        r"\"(?:auth|identitytoken|registrytoken)\"[ \t]*+:[ \t]*+"
        r"\"(?P<s>[A-Za-z0-9+/=._-]{8,}+)\""),
          keywords=('"auth"', '"identitytoken"', '"registrytoken"')),
    _Rule("docker_auth", _LazyPattern(
        r"\.docker(?:configjson|cfg)[\"']?[ \t]*+:[ \t]*+[\"']?(?P<s>[A-Za-z0-9+/=]{16,}+)"),
          keywords=(".dockerconfigjson", ".dockercfg")),
    _Rule("docker_auth", _token("eyJhdXRocyI6", r"[A-Za-z0-9+/=]{8,}+", "A-Za-z0-9+/"),
          keywords=("eyjhdxrocyi6",)),
    _Rule("private_key", _LazyPattern(
        _PEM_B64 + "(?:" + "|".join(_B64_KEY_HEADS) + r")[A-Za-z0-9+/=]*+"),
          keywords=(_PEM_B64.lower(),)),
    _Rule("private_key", _LazyPattern(
        r"(?:client-key-data|tls\.key|ssh-privatekey|private_key|privateKey)"
        r"[\"']?[ \t]*+:[ \t]*+[\"']?(?P<s>[A-Za-z0-9+/]{40,}+=*+)"),
          keywords=("client-key-data", "tls.key", "ssh-privatekey", "private_key", "privatekey")),
    _KubernetesSecretRule("kubernetes_secret", _LazyPattern(
        r"(?<![A-Za-z0-9_])(?:data|stringData):"), keywords=("data:",)),
    _Rule("kubernetes_secret", _LazyPattern(
        r"--from-literal=[^=\s]++=[\"']?(?P<s>[^\s\"']{4,}+)"), keywords=("--from-literal",)),
    _Rule("discord_webhook", _LazyPattern(
        r"discord(?:app)?\.com/api/(?:v[0-9]{1,2}/)?webhooks/"
        r"(?P<s>[0-9]{17,20}/[A-Za-z0-9_-]{60,}+)"),
          keywords=("discord",)),
    _Rule("teams_webhook", _LazyPattern(
        r"(?:webhook\.office\.com/webhookb2|outlook\.office(?:365)?\.com/webhook)/"
        r"(?P<s>[^\s\"'<>`]{20,}+)"), keywords=("webhook.office.com/webhookb2",
                                                 "outlook.office.com/webhook",
                                                 "outlook.office365.com/webhook")),
    _Rule("aws_presigned_signature", _LazyPattern(
        r"(?:X-Amz-Signature|X-Amz-Security-Token|x-amz-signature|x-amz-security-token)="
        r"(?P<s>[^&\s\"'<>#]{16,}+)"), keywords=("x-amz-",)),
    _Rule("aws_presigned_signature", _LazyPattern(
        r"[?&](?:Signature|signature)=(?P<s>[A-Za-z0-9%+/=_-]{20,}+)"),
          keywords=("signature=",)),
    _Rule("azure_function_key", _LazyPattern(r"[?&]code=(?P<s>[A-Za-z0-9_%+/=-]{40,}+)"),
          keywords=("code=",)),
    _Rule("firebase_fcm_key", _LazyPattern(
        r"(?<![A-Za-z0-9_-])AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}+"),
          keywords=("apa91b",)),
    _Rule("wandb_api_key", _LazyPattern(
        r"(?:wandb[ \t]++login(?:[ \t]++--(?:host|base-url)(?:=|[ \t]++)[^\s\"']++"
        r"|[ \t]++--[a-z-]++(?:=[A-Za-z]++)?)*+[ \t]++|WANDB_API_KEY" + _ASSIGN
        + r"|wandb\.login\([^)\n]{0,200}?key[ \t]*+=[ \t]*+[\"'])"
        r"(?P<s>(?:local-)?[0-9a-f]{40,}+)"), keywords=("wandb",)),
    _KaggleRule("kaggle_key", _LazyPattern(
        r"(?:\"key\"[ \t]*+:[ \t]*+\"|KAGGLE_KEY" + _ASSIGN + r")(?P<s>[0-9a-f]{32})"
        r"(?![0-9A-Za-z])"), keywords=("kaggle_key", '"key"')),
    _Rule("mailchimp_api_key", _LazyPattern(
        r"(?<![A-Za-z0-9])[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9])"), keywords=("-us",)),
    _Rule("braintree_access_token", _LazyPattern(
        r"access_token\$(?:production|sandbox|development)\$[0-9a-z]{16}\$[0-9a-f]{32}"),
          keywords=("access_token$",)),
)


# Below this many bytes scanned in a process, keywords are found one `bytes.find` at a time
# (~150 ns a byte for all of them); past it by an Aho-Corasick DFA, 4 ns a byte but ~5 ms to
# import and build: a hook that redacts a prompt never loads it, a build after a dozen notes.
_AUTOMATON_AFTER = 32 * 1024


class _Keywords:
    """Where each rule keyword occurs in a `_lowered` text, overlapping occurrences included:
    {keyword's number: [positions]} for the keywords that occur."""

    def __init__(self, keywords: tuple[bytes, ...], automaton_after: int) -> None:
        self.keywords = keywords
        self._left = automaton_after
        self._automaton: Any = None

    def find(self, lowered: bytes) -> dict[int, list[int]]:
        found_at: dict[int, list[int]] = {}
        if self._automaton is None:
            self._left -= len(lowered)
            if self._left >= 0:
                for n, keyword in enumerate(self.keywords):
                    at = lowered.find(keyword)
                    if at >= 0:
                        found_at[n] = starts = [at]
                        while (at := lowered.find(keyword, at + 1)) >= 0:
                            starts.append(at)
                return found_at
            import ahocorasick_rs

            self._automaton = ahocorasick_rs.BytesAhoCorasick(
                list(self.keywords), implementation=ahocorasick_rs.Implementation.DFA)
        for keyword, start, _end in self._automaton.find_matches_as_indexes(
                lowered, overlapping=True):
            if keyword in found_at:
                found_at[keyword].append(start)
            else:
                found_at[keyword] = [start]
        return found_at


class _Gate:
    def __init__(self, rules: tuple[_Rule, ...], keywords: _Keywords,
                 rules_of: tuple[tuple[int, ...], ...], keywords_of: tuple[tuple[int, ...], ...],
                 always: frozenset[int]) -> None:
        self.rules = rules
        self.keywords = keywords
        # For each keyword (as numbered in `keywords`), the rules that hold it.
        self.rules_of = rules_of
        # For each rule, its keywords' numbers; and the rules without keywords, which always run.
        self.keywords_of = keywords_of
        self.always = always


@functools.cache
def _gate() -> _Gate:
    """Every rule in rank order (the specific kinds, then the generic shapes, so a GitHub
    token in `GITHUB_API_KEY=...` is named for GitHub, not `password`), and all their
    keywords, found in one pass over the text: it tells which rules can match, and where."""
    rules: list[_Rule] = [r for r in _RULES if r.kind not in _GENERIC]
    rules += _VENDOR_RULES + _MORE_RULES
    rules += [r for r in _RULES if r.kind in _GENERIC]
    numbers: dict[str, int] = {}
    holders: list[list[int]] = []
    for i, rule in enumerate(rules):
        for keyword in dict.fromkeys(rule.keywords):
            # Matched in `_lowered` text, where `?` stands for any character beyond ASCII.
            assert keyword.isascii() and keyword == keyword.lower() and "?" not in keyword
            if keyword not in numbers:
                numbers[keyword] = len(numbers)
                holders.append([])
            holders[numbers[keyword]].append(i)
    keywords_of = tuple(tuple(numbers[k] for k in rule.keywords) for rule in rules)
    rules_of = tuple(map(tuple, holders))
    keywords = _Keywords(tuple(keyword.encode() for keyword in numbers), _AUTOMATON_AFTER)
    always = frozenset(i for i, rule in enumerate(rules) if not rule.keywords)
    return _Gate(tuple(rules), keywords, rules_of, keywords_of, always)


_GENERIC = frozenset({"bearer_token", "url_credentials", "curl_auth_user", "cli_password",
                      "netrc_password", "password", "prose_secret"})


# Redacting can change what a rule sees next to the secret: in `...KEY-----ghp_...` the token
# is glued to a word, but after the key block becomes a marker it starts after `]`. Scanning
# the redacted text again until nothing new turns up is what makes `redact` idempotent; the
# cap only matters for contrived chains of glued secrets.
_MAX_PASSES = 4


def _rightmost_at_most(values: list[int], x: int) -> int:
    """Index of the last value <= x in sorted `values`, or -1."""
    lo, hi = 0, len(values)
    while lo < hi:
        mid = (lo + hi) // 2
        if values[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


def _lowered(text: str) -> bytes:
    """`text` lower-cased for the keyword pass, one byte a character at the same positions:
    anything beyond ASCII is `?`. Beyond ASCII only the Kelvin sign lowers to an ASCII letter,
    and only `İ` to two characters (a test walks every character): as it always was, the
    Kelvin sign counts as `k` unless an `İ` is there too."""
    if "\u212a" in text and "\u0130" not in text:
        return text.lower().encode("ascii", "replace")
    return text.encode("ascii", "replace").lower()


def _scan(text: str) -> list[tuple[str, int, int]]:
    """One pass of every rule; overlapping hits merged, hits touching a marker dropped."""
    markers = [m.span() for m in _MARKER_RE.finditer(text)] if "[REDACTED:" in text else []
    marker_starts = [start for start, _ in markers]
    hits: list[tuple[int, int, int, str]] = []
    lowered = _lowered(text)
    gate = _gate()
    found_at = gate.keywords.find(lowered)
    run = set(gate.always)
    for keyword in found_at:
        run.update(gate.rules_of[keyword])
    shared: dict[tuple[int, ...], _Starts] = {}
    found: list[tuple[int, str, list[tuple[int, int]]]] = []
    for i in sorted(run):
        rule = gate.rules[i]
        if rule.gate is not None and rule.gate.search(lowered) is None:
            continue
        starts = None
        if rule.anchored and rule.keywords:
            own = gate.keywords_of[i]
            starts = shared.get(own)
            if starts is None:
                every = [at for keyword in own for at in found_at.get(keyword, ())]
                starts = shared[own] = _Starts(every, len(text))
            if not starts.dense and not starts.tried(text, rule.lead):
                continue
        found.append((i, rule.kind, rule.spans(text, starts)))
    for rank, kind, spans in found:
        for start, end in spans:
            if start >= end:
                continue
            if markers:
                i = _rightmost_at_most(marker_starts, end - 1)
                if i >= 0 and markers[i][1] > start:
                    continue
            hits.append((start, -end, rank, kind))
    # Earliest start first, longest first among equal starts, rule order breaks exact ties;
    # anything overlapping the previous span is folded into it so no detected byte survives.
    hits.sort()
    merged: list[tuple[str, int, int]] = []
    for start, neg_end, _rank, kind in hits:
        end = -neg_end
        if merged and start < merged[-1][2]:
            last_kind, last_start, last_end = merged[-1]
            if end > last_end:
                merged[-1] = (last_kind, last_start, end)
            continue
        merged.append((kind, start, end))
    return merged


def _apply(text: str, spans: list[tuple[str, int, int]]) -> tuple[str, list[int], list[int]]:
    """Redacted text, plus where each kept stretch of `text` starts in the output and in
    `text`, so spans found in the output can be mapped back."""
    parts: list[str] = []
    out_starts: list[int] = []
    src_starts: list[int] = []
    pos = out_len = 0
    for kind, start, end in spans:
        out_starts.append(out_len)
        src_starts.append(pos)
        marker = f"[REDACTED:{kind}]"
        parts.append(text[pos:start])
        parts.append(marker)
        out_len += start - pos + len(marker)
        pos = end
    out_starts.append(out_len)
    src_starts.append(pos)
    parts.append(text[pos:])
    return "".join(parts), out_starts, src_starts


def find_secrets(text: str) -> list[tuple[str, int, int]]:
    """Spans of secrets in `text` as `(kind, start, end)`, sorted and non-overlapping."""
    if not text:
        return []
    spans = _scan(text)
    for _ in range(_MAX_PASSES - 1):
        if not spans:
            break
        redacted, out_starts, src_starts = _apply(text, spans)
        extra = _scan(redacted)
        if not extra:
            break
        # New hits never touch a marker, so each lies inside one kept stretch of `text`.
        for kind, start, end in extra:
            i = _rightmost_at_most(out_starts, start)
            shift = src_starts[i] - out_starts[i]
            spans.append((kind, start + shift, end + shift))
        spans.sort(key=lambda span: span[1])
    return spans


def redact(text: str) -> str:
    """Return text with every secret replaced by `[REDACTED:<kind>]`; everything else
    byte-identical."""
    spans = find_secrets(text)
    return _apply(text, spans)[0] if spans else text
