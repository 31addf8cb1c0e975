"""Vendor tokens recognised by their published prefix: (kind, prefixes, body characters,
shortest body). Written by hand from each vendor's documented token format; a token is its
prefix (not the tail of a longer word) followed by at least that many body characters.
Only prefixes distinctive enough that ordinary prose and code never carry them are listed.
Rows checked against a published format carry its source in docs/secrets.md (issue #31).
"""

from __future__ import annotations

_ALNUM = "A-Za-z0-9"
_URLSAFE = "A-Za-z0-9_\\-"
_HEX = "a-fA-F0-9"

VENDOR_TOKENS: tuple[tuple[str, tuple[str, ...], str, int], ...] = (
    ("slack_app_token", ("xapp-",), _URLSAFE, 24),
    ("gitlab_cicd_job_token", ("glcbt-",), _URLSAFE, 20),
    ("gitlab_feed_token", ("glft-",), _URLSAFE, 20),
    ("gitlab_scim_token", ("glsoat-",), _URLSAFE, 20),
    # glsa_ + 32 alphanumerics + _ + 8 hex (gitleaks grafana-service-account-token).
    ("grafana_service_account_token", ("glsa_",), _URLSAFE, 41),
    ("grafana_cloud_api_token", ("glc_",), _ALNUM + "+/=", 32),
    # HRKU-AA + 58 (gitleaks heroku-api-key-v2).
    ("heroku_api_key_v2", ("HRKU-",), _URLSAFE, 60),
    ("digitalocean_pat", ("dop_v1_", "doo_v1_", "dor_v1_"), _HEX, 64),
    ("shopify_access_token", ("shpat_", "shpca_", "shppa_"), _HEX, 32),
    ("shopify_shared_secret", ("shpss_",), _HEX, 32),
    ("databricks_api_token", ("dapi",), _HEX + "-", 32),
    # Vault 1.10+: service tokens hvs. + 90-120, batch tokens hvb. + 138-300 (gitleaks).
    ("vault_service_token", ("hvs.",), _URLSAFE, 90),
    ("vault_service_token", ("hvb.",), _URLSAFE, 138),
    # Bech32 of a 32-byte X25519 key: 52 data + 6 checksum characters (age spec, C2SP).
    ("age_secret_key", ("AGE-SECRET-KEY-1",), "A-Z0-9", 58),
    ("alibaba_access_key_id", ("LTAI",), _ALNUM, 20),
    ("artifactory_api_key", ("AKCp",), _ALNUM, 69),
    ("clojars_api_token", ("CLOJARS_",), _ALNUM, 60),
    # 40-44 alphanumerics; a service token carries its environment first: dp.st.dev.<40>.
    ("doppler_api_token", ("dp.pt.", "dp.ct.", "dp.sa.", "dp.scim."), _ALNUM, 40),
    ("doppler_api_token", ("dp.st.",), _URLSAFE + ".", 40),
    ("duffel_api_token", ("duffel_test_", "duffel_live_"), _URLSAFE + "=", 43),
    # prefix . 24-character public portion . 64-character secret (docs.dynatrace.com).
    ("dynatrace_api_token", ("dt0c01.", "dt0s01."), _ALNUM + ".", 89),
    ("easypost_api_token", ("EZAK", "EZTK"), _ALNUM, 54),
    # fo1_ + 43; macaroons fm1a_, fm1r_, fm2_ + 100 or more base64 (gitleaks flyio).
    ("flyio_access_token", ("fo1_",), _URLSAFE, 43),
    ("flyio_access_token", ("fm1a_", "fm1r_", "fm2_"), _URLSAFE + "+/=", 100),
    ("frameio_api_token", ("fio-u-",), _URLSAFE + "=", 64),
    ("infracost_api_token", ("ico-",), _ALNUM, 32),
    ("linear_api_key", ("lin_api_",), _ALNUM, 40),
    ("notion_api_token", ("ntn_", "secret_"), _ALNUM, 40),
    ("openshift_user_token", ("sha256~",), _URLSAFE, 43),
    ("perplexity_api_key", ("pplx-",), _ALNUM, 48),
    ("planetscale_password", ("pscale_pw_", "pscale_tkn_", "pscale_oauth_"), _URLSAFE + ".=",
     32),
    # PMAK- + 24 hex + - + 34 hex (gitleaks postman-api-token).
    ("postman_api_token", ("PMAK-",), _HEX + "-", 59),
    ("prefect_api_token", ("pnu_",), _ALNUM, 36),
    ("pulumi_api_token", ("pul-",), _HEX, 40),
    ("readme_api_token", ("rdme_",), _ALNUM, 70),
    ("rubygems_api_token", ("rubygems_",), _HEX, 48),
    ("scalingo_api_token", ("tk-us-",), _URLSAFE, 48),
    # xkeysib- + 64 hex + - + 16 alphanumerics (gitleaks sendinblue-api-token).
    ("sendinblue_api_token", ("xkeysib-",), _ALNUM + "-", 81),
    ("sentry_user_token", ("sntryu_",), _HEX, 64),
    ("sentry_org_token", ("sntrys_",), _ALNUM + "+/=_", 60),
    ("shippo_api_token", ("shippo_live_", "shippo_test_"), _HEX, 40),
    # sq0atp- + 22 or more, sq0csp- + 43; current access tokens are EAAA + 60 (gitleaks).
    ("square_access_token", ("sq0atp-",), _URLSAFE, 22),
    ("square_access_token", ("sq0csp-",), _URLSAFE, 43),
    ("square_access_token", ("EAAA",), _URLSAFE, 60),
    ("new_relic_user_api_key", ("NRAK-",), "A-Z0-9", 27),
    ("adobe_client_secret", ("p8e-",), _ALNUM, 32),
    ("atlassian_api_token", ("ATATT3",), _URLSAFE + "=", 100),
    ("typeform_api_token", ("tfp_",), _URLSAFE + ".=", 59),
    ("yandex_api_key", ("AQVN",), _URLSAFE, 35),
    ("settlemint_personal_access_token", ("sm_pat_", "sm_aat_", "sm_sat_"), _ALNUM, 16),
    ("intra42_client_secret", ("s-s4t2ud-", "s-s4t2af-"), _HEX, 64),
    ("onepassword_service_account_token", ("ops_eyJ",), _ALNUM + "+/=", 250),
    ("huggingface_org_token", ("api_org_",), _ALNUM, 34),
    # `^SK[0-9a-fA-F]{32}$` (twilio.com/docs/iam/api-keys/key-resource-v1): either case.
    ("twilio_api_key", ("SK",), _HEX, 32),
    ("gitlab_feature_flag_client_token", ("glffct-",), _URLSAFE, 20),
    ("gitlab_incoming_mail_token", ("glimt-",), _URLSAFE, 25),
    ("gitlab_kubernetes_agent_token", ("glagent-",), _URLSAFE, 50),
    ("gitlab_oauth_app_secret", ("gloas-",), _URLSAFE, 64),
    ("gitlab_runner_registration_token", ("GR1348941",), _URLSAFE, 20),
    # CCIPAT_/CCIPRJ_ + base58 UUID (21-22) + `_` + 40 hex (circleci.com changelog,
    # new-format-for-api-access-tokens); project tokens were missed.
    ("circleci_personal_token", ("CCIPAT_", "CCIPRJ_"), _ALNUM + "_", 62),
    # bkua_ + 40 hex, or a base64 id, `.`, 40 hex (buildkite.com/docs/platform/security/tokens:
    # `bkua_MTA.` + 40 hex); hex alone let the current shape through.
    ("buildkite_api_token", ("bkua_",), _ALNUM + ".=", 40),
    ("sourcegraph_access_token", ("sgp_",), _ALNUM + "_", 40),
    ("dockerhub_access_token", ("dckr_pat_",), _URLSAFE, 27),
    ("netlify_access_token", ("nfp_",), _ALNUM + "_", 36),
    # sbp_ or sbp_oauth_ + 40 hex (the Supabase CLI's `^sbp_(oauth_)?[a-f0-9]{40}$`); scoped
    # tokens are sbp_fc_ + an unpublished body.
    ("supabase_access_token", ("sbp_", "sbp_oauth_"), _HEX, 40),
    ("supabase_access_token", ("sbp_fc_",), _URLSAFE, 32),
    ("neon_api_key", ("napi_",), _ALNUM, 64),
    # ddp_ personal, ddo_ organisation tokens (docs.doppler.com/docs/deno-deploy).
    ("deno_deploy_token", ("ddp_", "ddo_"), _ALNUM, 36),
    ("tailscale_key", ("tskey-auth-", "tskey-api-", "tskey-client-", "tskey-scim-",
                       "tskey-webhook-"), _ALNUM + "\\-", 31),
    ("akamai_client_token", ("akab-",), _ALNUM + "\\-", 33),
    ("new_relic_insert_key", ("NRII-",), _URLSAFE, 32),
    ("langsmith_api_key", ("lsv2_pt_", "lsv2_sk_"), _HEX + "_", 43),
    ("flutterwave_secret_key", ("FLWSECK-", "FLWSECK_TEST-"), _HEX + "X\\-", 34),
    ("contentful_management_token", ("CFPAT-",), _URLSAFE, 43),
    ("figma_access_token", ("figd_",), _URLSAFE, 40),
    ("groq_api_key", ("gsk_",), _ALNUM, 52),
    ("xai_api_key", ("xai-",), _ALNUM + "_", 80),
    ("replicate_api_token", ("r8_",), _URLSAFE, 37),
    ("pinecone_api_key", ("pcsk_",), _URLSAFE, 69),
    ("google_oauth_access_token", ("ya29.",), _URLSAFE, 30),
    ("google_oauth_refresh_token", ("1//0",), _URLSAFE, 30),
    ("cloudflare_origin_ca_key", ("v1.0-",), _HEX + "\\-", 171),
    ("mapbox_secret_token", ("sk.eyJ",), _URLSAFE + ".", 60),
    ("hubspot_private_app_token", ("pat-na1-", "pat-eu1-"), _HEX + "\\-", 36),
    ("meta_access_token", ("EAA",), _ALNUM, 101),
    ("onepassword_secret_key", ("A3-",), "A-Z0-9\\-", 36),
    ("bitbucket_app_password", ("ATBB",), _ALNUM + "_=.\\-", 32),
    ("bitbucket_access_token", ("ATCTT3xFfGN0",), _URLSAFE + "=", 100),
    # rnd_ + 24 alphanumerics (docs.rs/crate/keyhog-core, detectors/render-api-key.toml,
    # after render.com/docs/api); 32 let a 24-character key through.
    ("render_api_key", ("rnd_",), _ALNUM, 24),
    ("linear_oauth_token", ("lin_oauth_",), _HEX, 64),
)
