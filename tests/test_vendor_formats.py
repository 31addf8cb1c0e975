"""Vendor tokens in the shapes their published formats give (issue #31; the sources are in
docs/secrets.md). Each token is built at run time from its documented prefix, alphabet and
length, so this file holds nothing a secret scanner would flag; each must be redacted whole,
and a body one character shorter than documented must not be taken for one."""

from __future__ import annotations

import random

import pytest

from ocm.vault.secrets.redact import find_secrets, redact

HEX, HEX_UPPER = "0123456789abcdef", "0123456789ABCDEF"
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

# (kind, prefix, alphabet, documented body length)
DOCUMENTED = [
    ("render_api_key", "rnd_", ALNUM, 24),
    ("twilio_api_key", "SK", HEX_UPPER, 32),
    ("twilio_api_key", "SK", HEX, 32),
    ("sentry_user_token", "sntryu_", HEX, 64),
    ("shopify_access_token", "shpat_", HEX, 32),
    ("shopify_access_token", "shpca_", HEX, 32),
    ("shopify_access_token", "shppa_", HEX, 32),
    ("shopify_shared_secret", "shpss_", HEX, 32),
    ("digitalocean_pat", "dop_v1_", HEX, 64),
    ("digitalocean_pat", "doo_v1_", HEX, 64),
    ("digitalocean_pat", "dor_v1_", HEX, 64),
    ("groq_api_key", "gsk_", ALNUM, 52),
    ("dockerhub_access_token", "dckr_pat_", ALNUM + "_-", 27),
    ("notion_api_token", "ntn_", ALNUM, 46),
]


def _token(prefix: str, alphabet: str, length: int) -> str:
    rng = random.Random(prefix + alphabet)
    return prefix + "".join(rng.choice(alphabet) for _ in range(length))


@pytest.mark.parametrize("kind,prefix,alphabet,length", DOCUMENTED,
                         ids=[f"{k}-{p}-{len(a)}" for k, p, a, _ in DOCUMENTED])
def test_a_documented_token_is_redacted_whole(kind: str, prefix: str, alphabet: str,
                                              length: int) -> None:
    token = _token(prefix, alphabet, length)
    line = f'export KEY="{token}" # from the console'
    assert [found for found, *_ in find_secrets(line)] == [kind]
    cleaned = redact(line)
    assert token not in cleaned and prefix + token[len(prefix):][:4] not in cleaned
    assert cleaned.endswith('" # from the console')


def test_short_render_key_no_longer_leaks() -> None:
    """rnd_ with 24 alphanumerics (the documented length): kept whole before, at 32."""
    token = _token("rnd_", ALNUM, 24)
    assert token not in redact(f"RENDER_TOKEN {token}")
    assert "render_api_key" not in [k for k, *_ in find_secrets(_token("rnd_", ALNUM, 23))]
