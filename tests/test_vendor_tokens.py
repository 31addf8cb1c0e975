"""Every vendor token kind, one by one: a positive example (the stress corpus, which
tests/test_secret_paths.py sends through every write path) and negative ones built from its
own row of the table: the prefix with a body one character short, and the prefix at the end
of a longer word. The two kinds with a structure of their own get hand-written near misses.

Bodies are assembled at run time from each row's character class, so this file holds nothing
a secret scanner would flag.
"""

from __future__ import annotations

import random
import re
import string

import pytest

from ocm.vault.secrets.redact import REDACTION_KINDS, find_secrets
from ocm.vault.secrets.vendor_tokens import VENDOR_TOKENS
from tests.test_stress_writers import load_stress

CORPUS_KINDS = {kind for kind, *_ in load_stress().secret_corpus()}
CHARACTERS = string.ascii_letters + string.digits + "-_.+/=~"
ROWS = [(kind, prefix, body, shortest)
        for kind, prefixes, body, shortest in VENDOR_TOKENS for prefix in prefixes]


def _body(char_class: str, length: int, seed: str) -> str:
    allowed = [c for c in CHARACTERS if re.fullmatch(f"[{char_class}]", c)]
    rng = random.Random(seed)
    return "".join(rng.choice(allowed) for _ in range(length))


def _kinds(text: str) -> list[str]:
    return [kind for kind, _start, _end in find_secrets(text)]


def test_every_kind_has_a_positive_example_in_the_corpus() -> None:
    assert set(REDACTION_KINDS) - CORPUS_KINDS == set()


@pytest.mark.parametrize("kind,prefix,body,shortest", ROWS, ids=lambda v: str(v)[:24])
def test_a_full_body_is_caught(kind: str, prefix: str, body: str, shortest: int) -> None:
    token = prefix + _body(body, shortest, f"{kind}/{prefix}")
    assert _kinds(f"see {token} ok") == [kind]


@pytest.mark.parametrize("kind,prefix,body,shortest", ROWS, ids=lambda v: str(v)[:24])
def test_one_character_short_is_kept(kind: str, prefix: str, body: str, shortest: int) -> None:
    token = prefix + _body(body, shortest - 1, f"{kind}/{prefix}")
    assert kind not in _kinds(f"see {token} ok")


@pytest.mark.parametrize("kind,prefix,body,shortest", ROWS, ids=lambda v: str(v)[:24])
def test_the_prefix_inside_a_word_is_kept(kind: str, prefix: str, body: str,
                                          shortest: int) -> None:
    token = prefix + _body(body, shortest + 8, f"{kind}/{prefix}")
    assert kind not in _kinds(f"see word{token} ok")


def _hex(n: int) -> str:
    return _body("a-f0-9", n, f"hex{n}")


def _alnum(n: int) -> str:
    return _body("A-Za-z0-9", n, f"alnum{n}")


@pytest.mark.parametrize("kind,text", [
    ("hashicorp_tf_api_token", f"token {_alnum(14)}.atlas" + f"v1.{_alnum(60)} ok"),
    ("airtable_personal_access_token", f"airtable pat{_alnum(14)}.{_hex(64)} ok"),
])
def test_structured_kinds_are_caught(kind: str, text: str) -> None:
    assert _kinds(text) == [kind]


@pytest.mark.parametrize("text", [
    f"token {_alnum(13)}.atlas" + f"v1.{_alnum(60)} ok",  # 13 before the marker, not 14
    f"token {_alnum(15)}.atlas" + f"v1.{_alnum(60)} ok",  # 15: part of a longer word
    f"token {_alnum(14)}.atlas" + f"v1.{_alnum(59)} ok",  # too short after it
    f"airtable pat{_alnum(14)}.{_hex(63)} ok",  # one hex digit short
    f"airtable pat{_alnum(13)}.{_hex(64)} ok",
    f"airtable pat{_alnum(14)}.{_hex(64)}g ok",  # runs on into a longer word
    "the pattern pathological_patterns.patch is kept",
    "release v1.0-beta and v1.0-rc1 of the A3-sized poster",
    "x = 1//0  # ZeroDivisionError",
    "config.secret_key_base = Rails.application.credentials.secret_key_base",
    "EAAB is a register name",
    "ya29. is where Google access tokens start",
])
def test_near_misses_are_kept(text: str) -> None:
    assert find_secrets(text) == []
