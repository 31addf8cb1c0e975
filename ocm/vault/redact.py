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
* Markers are never re-matched: the value classes exclude `[` and `]`, and as a second guard
  any hit that touches an existing `[REDACTED:...]` marker is dropped. That is what makes
  `redact(redact(x)) == redact(x)`.
* Generic rules (assignments, bare `Bearer`) carry a check that rejects values which read as
  code or placeholders (`get_token()`, `self.token`, `${TOKEN}`, `password: str`), because a
  memory store full of false markers is nearly as useless as one that leaks.
"""

from __future__ import annotations

import re

REDACTION_KINDS: tuple[str, ...] = (
    "private_key",
    "aws_access_key",
    "aws_secret_key",
    "github_token",
    "anthropic_key",
    "openai_key",
    "slack_token",
    "slack_webhook",
    "stripe_key",
    "google_api_key",
    "gitlab_token",
    "npm_token",
    "huggingface_token",
    "sendgrid_key",
    "pypi_token",
    "jwt",
    "bearer_token",
    "url_credentials",
    "password",
)

_MARKER_RE = re.compile(r"\[REDACTED:[a-z_]+\]")
_HAS_DIGIT = re.compile(r"[0-9]")
_HAS_UPPER = re.compile(r"[A-Z]")
_HAS_LOWER = re.compile(r"[a-z]")


def _casings(*words: str) -> str:
    """`token|Token|TOKEN` for each word: lower, camelCase/Title and CONSTANT_CASE spellings."""
    variants = [v for w in words for v in (w, w.capitalize(), w.upper())]
    return "|".join(sorted(variants, key=len, reverse=True))


class _LeftBoundary:
    """Check that a hit is not the tail of a longer word.

    Done in Python rather than with a leading lookbehind, because a pattern that starts with a
    lookbehind loses `re`'s prefix scan and gets tried at every offset of the text.
    """

    def __init__(self, chars: str) -> None:
        self._word_char = re.compile(f"[{chars}]")

    def __call__(self, text: str, m: re.Match[str]) -> bool:
        start = m.start()
        return start == 0 or self._word_char.match(text, start - 1) is None


_token_boundary = _LeftBoundary("A-Za-z0-9_-")
_alnum_boundary = _LeftBoundary("A-Za-z0-9")
_host_boundary = _LeftBoundary("A-Za-z0-9.-")


def _check_openai(text: str, m: re.Match[str]) -> bool:
    # Real keys are random base62 and contain a digit; long hyphenated names such as
    # `sk-learn-contrib-imbalanced` do not.
    return _token_boundary(text, m) and _HAS_DIGIT.search(m.group()) is not None


def _check_bare_bearer(text: str, m: re.Match[str]) -> bool:
    # Outside an `Authorization:` header "Bearer" is often just English, so the token has to
    # look machine-made; `Bearer YOUR_ACCESS_TOKEN` style placeholders do not.
    token = m.group("s")
    looks_random = _HAS_DIGIT.search(token) is not None or (
        _HAS_UPPER.search(token) is not None and _HAS_LOWER.search(token) is not None
    )
    return looks_random and _alnum_boundary(text, m)


# --- assignment-style secrets: `key <sep> value` -------------------------------------------

# Only the last word of the key is matched by the regex (`DB_PASSWORD` -> `PASSWORD`,
# `clientSecret` -> `Secret`); whatever precedes it stays untouched in the output anyway.
_KEYWORD = "(?P<key>" + _casings("password", "passwd", "passphrase", "pass", "pwd", "secret",
                                 "token", "key") + ")"  # fmt: skip
# `key` alone is far too common (`key = "user:42"`); it counts only as `api_key`, `secretKey`...
_KEY_QUALIFIER_RE = re.compile(
    r"(?i:api|secret|access|private|signing|encryption|master|auth|client)[_-]?\Z"
)
# Optional closing quote of a JSON/dict key, then `=`, `:`, `:=`, `=>`, or the annotated form
# `name: type = value`. `==`/`===` are comparisons, not assignments.
_KEY_AND_SEP = (
    _KEYWORD
    + r"[\"']?[ \t]*+"
    + r"(?P<sep>:=|=>|=(?![=>])|:(?!:)(?:[ \t]*+[A-Za-z_][\w.\[\]|, ]*+=(?![=>]))?)"
    + r"[ \t]*+"
)
# Quoted values allow backslash escapes; the unrolled loop keeps it linear.
_DQ_VALUE = r"\"(?P<s>[^\"\\\n]*+(?:\\.[^\"\\\n]*+)*+)\""
_SQ_VALUE = r"'(?P<s>[^'\\\n]*+(?:\\.[^'\\\n]*+)*+)'"
# Unquoted values stop at whitespace and at characters that end a value in env files, query
# strings and connection strings. Refused when a call or subscript follows, so
# `token = get_token()` and `key = os.environ["KEY"]` are left alone.
_BARE_VALUE = r"(?P<s>[^\s\"'`,;&|()\[\]{}<>]++)(?![(\[])"

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
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"
    r"|[a-z]+(?:_[a-z]+)+"
    r"|[A-Z]+(?:_[A-Z]+)+"
    r"|[a-z]+(?:[A-Z][a-z]+)+"
)
_CODE_IDENTIFIER_RE = re.compile(r"[a-z]+|[a-z_][a-z0-9]*(?:_[a-z0-9]+)+")
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


def _check_assignment(text: str, m: re.Match[str], quoted: bool) -> bool:
    value = m.group("s")
    if len(value) < 6 or value.startswith("[REDACTED:"):
        return False
    if value.strip().lower() in _NON_SECRET_VALUES or _PLACEHOLDER_RE.match(value):
        return False
    if not _key_is_secret_name(text, m):
        return False
    if quoted:
        return True
    if _CODE_VALUE_RE.fullmatch(value):
        return False
    # `PWD=/home/me/project` in an env dump is a path, not a password.
    if value.startswith(("/", "~/", "./", "../")):
        return False
    sep = m.group("sep")
    if sep == ":":
        return _COLON_VALUE_END_RE.match(text, m.end()) is not None
    # `token = response` / `token = tok_v2`: spaces around `=` mean code, where a lowercase
    # identifier is a variable. `.env` and shell files never put spaces there.
    spaced = text[m.start("sep") - 1] in " \t"
    return not (spaced and sep in ("=", ":=") and _CODE_IDENTIFIER_RE.fullmatch(value))


def _check_quoted(text: str, m: re.Match[str]) -> bool:
    return _check_assignment(text, m, quoted=True)


def _check_bare(text: str, m: re.Match[str]) -> bool:
    return _check_assignment(text, m, quoted=False)


def _check_url_password(text: str, m: re.Match[str]) -> bool:
    return _PLACEHOLDER_RE.match(m.group("s")) is None


_BEARER_TOKEN = r"(?P<s>[A-Za-z0-9._~+/-]{15,}[A-Za-z0-9_~+/-]=*+)"

# (kind, pattern, check). On an exact tie (same span) the earlier rule names the marker, so
# specific kinds come before the generic `bearer_token` / `password`.
_RULES = (
    (
        "private_key",
        # A BEGIN line whose END is missing redacts to the end of the text: a truncated key is
        # still a key.
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*)",
            re.DOTALL,
        ),
        None,
    ),
    ("aws_access_key", re.compile(r"(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"), _alnum_boundary),
    (
        "aws_secret_key",
        re.compile(
            r"(?:aws|AWS|Aws)[_-]?(?:secret|SECRET|Secret)[A-Za-z_]*+[\"']?[ \t]*+"
            r"(?::=|=>|=|:)[ \t]*+[\"']?(?P<s>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        None,
    ),
    (
        "aws_secret_key",
        # The JSON that `aws sts` / `aws iam create-access-key` print.
        re.compile(
            r"(?:SecretAccessKey|secret_access_key|SECRET_ACCESS_KEY)[\"']?[ \t]*+"
            r"(?::=|=>|=|:)[ \t]*+[\"']?(?P<s>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        None,
    ),
    ("github_token", re.compile(r"gh[pousr]_[A-Za-z0-9]{36,}+"), _token_boundary),
    ("github_token", re.compile(r"github_pat_[A-Za-z0-9_]{30,}+"), _token_boundary),
    ("anthropic_key", re.compile(r"sk-ant-[A-Za-z0-9_-]{20,}+"), _token_boundary),
    ("openai_key", re.compile(r"sk-(?!ant-)[A-Za-z0-9_-]{20,}+"), _check_openai),
    ("slack_token", re.compile(r"xox[abprs]-[A-Za-z0-9-]{10,}+"), _token_boundary),
    (
        "slack_webhook",
        # The scheme stays, like the host of `url_credentials`; the URL itself is the secret.
        re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{8,}+"),
        _host_boundary,
    ),
    ("stripe_key", re.compile(r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}+"), _token_boundary),
    ("google_api_key", re.compile(r"AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"), _token_boundary),
    ("gitlab_token", re.compile(r"gl(?:pat|dt|ptt|rt)-[A-Za-z0-9_-]{20,}+"), _token_boundary),
    ("npm_token", re.compile(r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"), _token_boundary),
    ("huggingface_token", re.compile(r"hf_[A-Za-z0-9]{34,}+"), _token_boundary),
    (
        "sendgrid_key",
        re.compile(r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])"),
        _token_boundary,
    ),
    ("pypi_token", re.compile(r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}+"), _token_boundary),
    (
        "jwt",
        re.compile(r"eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+"),
        _token_boundary,
    ),
    (
        "bearer_token",
        # Inside a real Authorization header any token counts, placeholder-looking or not.
        re.compile(
            r"(?:Authorization|authorization|AUTHORIZATION)[\"']?[ \t]*+[:=][ \t]*+[\"']?"
            r"(?:Bearer|bearer|BEARER)[ \t]++" + _BEARER_TOKEN
        ),
        None,
    ),
    (
        "bearer_token",
        re.compile(r"(?:Bearer|bearer|BEARER)[ \t]++" + _BEARER_TOKEN),
        _check_bare_bearer,
    ),
    (
        "url_credentials",
        # scheme://user:PASSWORD@host: only the password goes, user and host stay readable.
        # Anchored on `://` so ports (`host:8080/`) never look like passwords.
        re.compile(r"://[^\s:/@?#\[\]\"'<>]*+:(?P<s>[^\s/@?#\[\]\"'<>{}]++)@(?=[^\s/@])"),
        _check_url_password,
    ),
    ("password", re.compile(_KEY_AND_SEP + _DQ_VALUE), _check_quoted),
    ("password", re.compile(_KEY_AND_SEP + _SQ_VALUE), _check_quoted),
    ("password", re.compile(_KEY_AND_SEP + _BARE_VALUE), _check_bare),
)


def _overlaps_marker(start: int, end: int, markers: list[tuple[int, int]]) -> bool:
    lo, hi = 0, len(markers)
    while lo < hi:
        mid = (lo + hi) // 2
        if markers[mid][1] <= start:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(markers) and markers[lo][0] < end


def find_secrets(text: str) -> list[tuple[str, int, int]]:
    """Spans of secrets in `text` as `(kind, start, end)`, sorted and non-overlapping."""
    if not text:
        return []
    markers = [m.span() for m in _MARKER_RE.finditer(text)]
    hits: list[tuple[int, int, int, str]] = []
    for rank, (kind, pattern, check) in enumerate(_RULES):
        has_group = "s" in pattern.groupindex
        for m in pattern.finditer(text):
            if check is not None and not check(text, m):
                continue
            start, end = m.span("s") if has_group else m.span()
            if start == end or (markers and _overlaps_marker(start, end, markers)):
                continue
            hits.append((start, -end, rank, kind))
    # Earliest start first, longest first among equal starts, rule order breaks exact ties;
    # anything overlapping the previous span is folded into it.
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


def redact(text: str) -> str:
    """Return text with every secret replaced by `[REDACTED:<kind>]`; everything else
    byte-identical."""
    spans = find_secrets(text)
    if not spans:
        return text
    parts: list[str] = []
    pos = 0
    for kind, start, end in spans:
        parts.append(text[pos:start])
        parts.append(f"[REDACTED:{kind}]")
        pos = end
    parts.append(text[pos:])
    return "".join(parts)
