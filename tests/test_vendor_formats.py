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
UPPER_DIGITS, LOWER_ALNUM = ALNUM[:26] + ALNUM[52:], ALNUM[26:]
BASE64, URLSAFE = ALNUM + "+/", ALNUM + "_-"
BECH32_UPPER = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"

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
    # venda rows
    ("slack_app_token", "xapp-", ALNUM + "-", 92),
    ("grafana_service_account_token", "glsa_", ALNUM + "_", 41),
    ("grafana_cloud_api_token", "glc_", BASE64, 32),
    ("heroku_api_key_v2", "HRKU-", URLSAFE, 60),
    ("databricks_api_token", "dapi", HEX, 32),
    ("vault_service_token", "hvs.", URLSAFE, 90),
    ("vault_service_token", "hvb.", URLSAFE, 138),
    ("age_secret_key", "AGE-SECRET-KEY-1", BECH32_UPPER, 58),
    ("alibaba_access_key_id", "LTAI", ALNUM, 20),
    ("artifactory_api_key", "AKCp", ALNUM, 69),
    ("clojars_api_token", "CLOJARS_", LOWER_ALNUM, 60),
    ("doppler_api_token", "dp.pt.", ALNUM, 40),
    ("doppler_api_token", "dp.ct.", ALNUM, 40),
    ("doppler_api_token", "dp.sa.", ALNUM, 40),
    ("doppler_api_token", "dp.scim.", ALNUM, 40),
    ("doppler_api_token", "dp.st.dev.", ALNUM, 40),
    ("duffel_api_token", "duffel_test_", LOWER_ALNUM + "_-=", 43),
    ("duffel_api_token", "duffel_live_", LOWER_ALNUM + "_-=", 43),
    ("dynatrace_api_token", "dt0c01.", UPPER_DIGITS + ".", 89),
    ("dynatrace_api_token", "dt0s01.", UPPER_DIGITS + ".", 89),
    ("easypost_api_token", "EZAK", ALNUM, 54),
    ("easypost_api_token", "EZTK", ALNUM, 54),
    ("flyio_access_token", "fo1_", URLSAFE, 43),
    ("flyio_access_token", "fm1a_", BASE64 + "=", 100),
    ("flyio_access_token", "fm1r_", BASE64 + "=", 100),
    ("flyio_access_token", "fm2_", BASE64 + "=", 100),
    ("frameio_api_token", "fio-u-", LOWER_ALNUM + "_-=", 64),
    ("infracost_api_token", "ico-", ALNUM, 32),
    ("linear_api_key", "lin_api_", ALNUM, 40),
    ("openshift_user_token", "sha256~", URLSAFE, 43),
    ("perplexity_api_key", "pplx-", ALNUM, 48),
    ("planetscale_password", "pscale_pw_", URLSAFE + ".=", 32),
    ("planetscale_password", "pscale_tkn_", URLSAFE + ".=", 32),
    ("planetscale_password", "pscale_oauth_", URLSAFE + ".=", 32),
    ("postman_api_token", "PMAK-", HEX + "-", 59),
    ("prefect_api_token", "pnu_", ALNUM, 36),
    ("pulumi_api_token", "pul-", HEX, 40),
    ("readme_api_token", "rdme_", LOWER_ALNUM, 70),
    ("rubygems_api_token", "rubygems_", HEX, 48),
    ("scalingo_api_token", "tk-us-", URLSAFE, 48),
    ("sendinblue_api_token", "xkeysib-", LOWER_ALNUM + "-", 81),
    ("sentry_org_token", "sntrys_", BASE64 + "=_", 180),
    ("shippo_api_token", "shippo_live_", HEX_UPPER, 40),
    ("shippo_api_token", "shippo_test_", HEX, 40),
    ("square_access_token", "sq0atp-", URLSAFE, 22),
    ("square_access_token", "sq0csp-", URLSAFE, 43),
    ("square_access_token", "EAAA", URLSAFE, 60),
    ("new_relic_user_api_key", "NRAK-", UPPER_DIGITS, 27),
    ("adobe_client_secret", "p8e-", ALNUM, 32),
    ("atlassian_api_token", "ATATT3", URLSAFE + "=", 186),
    ("typeform_api_token", "tfp_", LOWER_ALNUM + "-_.=", 59),
    ("yandex_api_key", "AQVN", URLSAFE, 35),
    ("settlemint_personal_access_token", "sm_pat_", ALNUM, 16),
    ("settlemint_personal_access_token", "sm_aat_", ALNUM, 16),
    ("settlemint_personal_access_token", "sm_sat_", ALNUM, 16),
    ("intra42_client_secret", "s-s4t2ud-", HEX, 64),
    ("intra42_client_secret", "s-s4t2af-", HEX, 64),
    ("onepassword_service_account_token", "ops_eyJ", BASE64 + "=", 250),
    ("huggingface_org_token", "api_org_", ALNUM[:52], 34),
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
    ("onepassword_secret_key", "A3-", UPPER_DIGITS + "-", 36),
    ("bitbucket_app_password", "ATBB", ALNUM, 32),
    ("linear_oauth_token", "lin_oauth_", HEX, 64),
    ("gitlab_feature_flag_client_token", "glffct-", URLSAFE, 20),
    ("gitlab_incoming_mail_token", "glimt-", URLSAFE, 25),
    ("gitlab_kubernetes_agent_token", "glagent-", URLSAFE, 50),
    ("gitlab_oauth_app_secret", "gloas-", URLSAFE, 64),
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


# Rows whose format gives no exact shortest body (a typical length is used above): the
# prefix rule keeps a lower floor, so a body one character short is still taken.
NO_EXACT_LENGTH = {
    ("notion_api_token", "ntn_"),  # "40 or more"
    ("slack_app_token", "xapp-"),  # segments of varying length
    ("doppler_api_token", "dp.st.dev."),  # the environment's name comes first
    ("sentry_org_token", "sntrys_"),  # "about 180 to 250 characters"
    ("atlassian_api_token", "ATATT3"),  # "a varied API token length"
}
# The one-character-short check: each prefix at its shortest documented body.
SHORTEST_ROWS = [row for row in DOCUMENTED if row[:2] not in NO_EXACT_LENGTH
                 and row[3] == min(n for k, p, _, n in DOCUMENTED if (k, p) == row[:2])]


@pytest.mark.parametrize(
    "kind,prefix,alphabet,length",
    SHORTEST_ROWS, ids=[f"{k}-{p}-{len(a)}" for k, p, a, _ in SHORTEST_ROWS])
def test_a_body_one_short_is_not_taken(kind: str, prefix: str, alphabet: str,
                                       length: int) -> None:
    token = _token(prefix, alphabet, length - 1)
    assert kind not in [found for found, *_ in find_secrets(f"token {token} here")]


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
