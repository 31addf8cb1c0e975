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
ALNUM_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
URLSAFE = ALNUM + "_-"

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
    # vendb rows
    ("gitlab_runner_registration_token", "GR1348941", URLSAFE, 20),
    ("circleci_personal_token", "CCIPAT_", ALNUM + "_", 62),
    ("circleci_personal_token", "CCIPAT_", ALNUM + "_", 63),
    ("circleci_personal_token", "CCIPRJ_", ALNUM + "_", 62),
    ("buildkite_api_token", "bkua_", HEX, 40),
    ("buildkite_api_token", "bkua_", ALNUM + ".", 44),
    ("sourcegraph_access_token", "sgp_", HEX, 40),
    ("sourcegraph_access_token", "sgp_", HEX + "_", 57),
    ("netlify_access_token", "nfp_", ALNUM + "_", 36),
    ("supabase_access_token", "sbp_", HEX, 40),
    ("supabase_access_token", "sbp_oauth_", HEX, 40),
    ("neon_api_key", "napi_", ALNUM, 64),
    ("deno_deploy_token", "ddp_", ALNUM, 36),
    ("deno_deploy_token", "ddo_", ALNUM, 36),
    ("tailscale_key", "tskey-api-", ALNUM + "-", 31),
    ("tailscale_key", "tskey-auth-", ALNUM + "-", 31),
    ("tailscale_key", "tskey-client-", ALNUM + "-", 31),
    ("tailscale_key", "tskey-scim-", ALNUM + "-", 31),
    ("tailscale_key", "tskey-webhook-", ALNUM + "-", 31),
    ("akamai_client_token", "akab-", ALNUM + "-", 33),
    ("new_relic_insert_key", "NRII-", URLSAFE, 32),
    ("langsmith_api_key", "lsv2_pt_", HEX + "_", 43),
    ("langsmith_api_key", "lsv2_sk_", HEX + "_", 43),
    ("flutterwave_secret_key", "FLWSECK-", HEX + "-X", 34),
    ("flutterwave_secret_key", "FLWSECK_TEST-", HEX + "-X", 34),
    ("contentful_management_token", "CFPAT-", URLSAFE, 43),
    ("figma_access_token", "figd_", URLSAFE, 40),
    ("xai_api_key", "xai-", ALNUM + "_", 80),
    ("replicate_api_token", "r8_", URLSAFE, 37),
    ("pinecone_api_key", "pcsk_", ALNUM + "_", 69),
    ("cloudflare_origin_ca_key", "v1.0-", HEX + "-", 171),
    ("mapbox_secret_token", "sk.eyJ", URLSAFE + ".", 60),
    ("hubspot_private_app_token", "pat-na1-", HEX + "-", 36),
    ("hubspot_private_app_token", "pat-eu1-", HEX + "-", 36),
    ("meta_access_token", "EAA", ALNUM, 101),
    ("onepassword_secret_key", "A3-", ALNUM_UPPER + "-", 36),
    ("bitbucket_app_password", "ATBB", ALNUM, 32),
    ("linear_oauth_token", "lin_oauth_", HEX, 64),
    ("gitlab_feature_flag_client_token", "glffct-", URLSAFE, 20),
    ("gitlab_incoming_mail_token", "glimt-", URLSAFE, 25),
    ("gitlab_kubernetes_agent_token", "glagent-", URLSAFE, 50),
    ("gitlab_oauth_app_secret", "gloas-", URLSAFE, 64),
]

# Kinds whose documented length above is the shortest body the format allows (docs/secrets.md
# gives the source): one character less is not that kind.
SHORTEST_DOCUMENTED = frozenset({
    "gitlab_runner_registration_token", "circleci_personal_token", "buildkite_api_token",
    "sourcegraph_access_token", "netlify_access_token", "supabase_access_token",
    "neon_api_key", "deno_deploy_token", "tailscale_key", "akamai_client_token",
    "new_relic_insert_key", "langsmith_api_key", "flutterwave_secret_key",
    "contentful_management_token", "figma_access_token", "xai_api_key", "replicate_api_token",
    "pinecone_api_key", "cloudflare_origin_ca_key",
    "hubspot_private_app_token", "meta_access_token", "onepassword_secret_key",
    "bitbucket_app_password", "linear_oauth_token", "gitlab_feature_flag_client_token",
    "gitlab_incoming_mail_token", "gitlab_kubernetes_agent_token", "gitlab_oauth_app_secret",
})
SHORTEST_ROWS = [(kind, prefix, alphabet, length) for kind, prefix, alphabet, length in DOCUMENTED
                 if kind in SHORTEST_DOCUMENTED
                 and length == min(n for k, _, _, n in DOCUMENTED if k == kind)]


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


@pytest.mark.parametrize("kind,prefix,alphabet,length", SHORTEST_ROWS,
                         ids=[f"{k}-{p}-{len(a)}" for k, p, a, _ in SHORTEST_ROWS])
def test_a_body_one_character_short_is_not_taken(kind: str, prefix: str, alphabet: str,
                                                 length: int) -> None:
    token = _token(prefix, alphabet, length - 1)
    assert kind not in [found for found, *_ in find_secrets(f'export KEY="{token}" # short')]


@pytest.mark.parametrize("kind,prefix,alphabet,length", DOCUMENTED,
                         ids=[f"{k}-{p}-{len(a)}" for k, p, a, _ in DOCUMENTED])
def test_every_character_of_the_documented_alphabet_is_taken(kind: str, prefix: str,
                                                             alphabet: str, length: int) -> None:
    """The body starts with the alphabet's rarer characters (`_`, `-`, `.`), which a random
    body may miss: a rule without one of them stops there and leaves the rest."""
    body = "".join(reversed(alphabet)) * (length // len(alphabet) + 1)
    token = prefix + body[:length]
    cleaned = redact(f"TOKEN={token} done")
    assert cleaned == f"TOKEN=[REDACTED:{kind}] done"
