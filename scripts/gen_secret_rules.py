"""Generate `ocm/vault/secret_rules.py` from gitleaks' rule set (`config/gitleaks.toml`).

    python scripts/gen_secret_rules.py PATH/TO/gitleaks.toml COMMIT > ocm/vault/secret_rules.py

gitleaks' rules are what security people run in pre-commit hooks and CI; no Python library
ships them in a form fast enough to import in a hook (detect-secrets: ~180 ms to import,
~1 ms a line). The rules are kept as data: their Go (RE2) regexes are translated to Python
`re` syntax here, once, and compiled lazily at run time only when one of a rule's keywords
occurs in the text (gitleaks' own prefilter).

Left out: rules gitleaks applies to file paths only, the file-format rule without a regex,
`generic-api-key` (the assignment rules of `redact.py` cover key/value shapes with checks
tuned for notes), and the kinds `redact.py` already names (so their markers stay the same).
"""

from __future__ import annotations

import re
import sys
import tomllib

# Kinds redact.py detects itself; gitleaks' twins would only rename their markers.
SKIPPED = {
    "generic-api-key", "pkcs12-file", "kubernetes-secret-yaml", "private-key", "jwt",
    "aws-access-token", "github-pat", "github-fine-grained-pat", "github-oauth",
    "github-app-token", "github-refresh-token", "openai-api-key", "anthropic-api-key",
    "slack-webhook-url", "gcp-api-key", "npm-access-token", "pypi-upload-token",
    "sendgrid-api-token", "gitlab-pat", "stripe-access-token",
    # `.*` up to five lines before the flag: quadratic on a line full of `curl`. redact.py
    # has its own `curl -u` rule, and headers are caught wherever they are written.
    "curl-auth-user", "curl-auth-header",
}  # fmt: skip

# What gitleaks accepts after a secret: a quote, space or `;`. Notes also end sentences and
# file names after one (`... is glsa_XXXX.`, `cfg/dapiXXXX.txt`), so punctuation is allowed too.
_END = "(?:[\\x60'\"\\s;]|\\\\[nr]|$)"
_NOTE_END = "(?:[\\x60'\"\\s;.,:!?)\\]}>&#/|]|\\\\[nr]|$)"

# A leading `[\w.-]{0,50}?` only widens the match to the left of the keyword (the name of
# the variable); the secret is a capture group after it, so the prefix is dropped: without
# it the regex is tried from the keyword on, not 50 times per position.
_LEFT_CONTEXT = "[\\w.-]{0,50}?"


def _group_end(rx: str, i: int) -> int:
    """Index of the `)` closing the group that contains position `i` (or len(rx))."""
    depth = 0
    in_class = False
    j = i
    while j < len(rx):
        c = rx[j]
        if c == "\\":
            j += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            if rx[j + 1 : j + 2] == "^":
                j += 1
            if rx[j + 1 : j + 2] == "]":
                j += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return j
            depth -= 1
        j += 1
    return len(rx)


def translate(rx: str) -> str:
    """A Go RE2 regex as Python `re` syntax, same meaning for the rules in gitleaks.toml."""
    rx = rx.replace("\\z", "\\Z").replace("[[:alnum:]]", "[A-Za-z0-9]")
    if rx.startswith("(?i)"):
        rx = rx[4:]
        body = _translate_inline(rx)
        return "(?i:" + body + ")"
    return _translate_inline(rx)


def _translate_inline(rx: str) -> str:
    # Go allows `(?i)` anywhere, applying to the end of its group; Python only at the start.
    while (i := rx.find("(?i)")) >= 0:
        end = _group_end(rx, i + 4)
        rx = rx[:i] + "(?i:" + rx[i + 4 : end] + ")" + rx[end:]
    return rx


def _strip_left_context(pattern: str) -> str:
    while True:
        if pattern.startswith(_LEFT_CONTEXT):
            pattern = pattern[len(_LEFT_CONTEXT) :]
        elif pattern.startswith("(?i:" + _LEFT_CONTEXT):
            pattern = "(?i:" + pattern[len("(?i:" + _LEFT_CONTEXT) :]
        else:
            return pattern


def kind_of(rule_id: str) -> str:
    kind = rule_id.replace("-", "_").replace("1password", "onepassword")
    return re.sub(r"[^a-z0-9_]", "_", kind.lower())


def main() -> None:
    path, commit = sys.argv[1], sys.argv[2]
    with open(path, "rb") as fh:
        config = tomllib.load(fh)
    rows = []
    for rule in config["rules"]:
        if rule["id"] in SKIPPED or "regex" not in rule or "path" in rule:
            continue
        regex = rule["regex"]
        pattern = _strip_left_context(translate(regex.replace(_END, _NOTE_END)))
        re.compile(pattern)  # fail here, not at run time
        allow: list[tuple[str, str]] = []
        stop: list[str] = []
        for entry in rule.get("allowlists", []):
            if entry.get("paths"):
                continue  # file-path conditions mean nothing for note text
            target = entry.get("regexTarget", "secret")
            allow += [(target, translate(r)) for r in entry.get("regexes", [])]
            stop += entry.get("stopwords", [])
        rows.append((kind_of(rule["id"]), tuple(rule["keywords"]), pattern,
                     float(rule.get("entropy", 0)), int(rule.get("secretGroup", 0)),
                     tuple(allow), tuple(stop)))  # fmt: skip
    glob = config.get("allowlist", {})
    out = sys.stdout
    out.write(
        "# ruff: noqa: E501\n"
        f'"""Secret rules from gitleaks\' config/gitleaks.toml (commit {commit}),\n'
        "translated to Python `re` by scripts/gen_secret_rules.py: do not edit by hand.\n\n"
        "gitleaks is MIT-licensed, Copyright (c) 2019 Zachary Rice.\n\n"
        "Each rule: (kind, keywords, regex, minimum entropy, secret group, allowlist regexes\n"
        "as (target, regex), stopwords). The keywords are lower case; a rule runs only where\n"
        "one of them occurs.\n"
        '"""\n\n'
        "# fmt: off\n"
        "RULES: tuple[tuple[str, tuple[str, ...], str, float, int,\n"
        "                   tuple[tuple[str, str], ...], tuple[str, ...]], ...] = (\n"
    )
    for row in rows:
        out.write(f"    {row!r},\n")
    out.write(")\n\n")
    out.write(f"GLOBAL_ALLOW_REGEXES: tuple[str, ...] = {tuple(translate(r) for r in glob.get('regexes', []))!r}\n")  # noqa: E501
    out.write(f"GLOBAL_STOPWORDS: tuple[str, ...] = {tuple(glob.get('stopwords', []))!r}\n")
    out.write("# fmt: on\n")


if __name__ == "__main__":
    main()
