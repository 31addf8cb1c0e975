"""Vendor tokens recognised by their published prefix: (kind, prefixes, body characters,
shortest body). Written by hand from each vendor's documented token format; a token is its
prefix (not the tail of a longer word) followed by at least that many body characters.
Only prefixes distinctive enough that ordinary prose and code never carry them are listed.
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
    ("grafana_service_account_token", ("glsa_",), _URLSAFE, 32),
    ("grafana_cloud_api_token", ("glc_",), _ALNUM + "+/=", 32),
    ("heroku_api_key_v2", ("HRKU-",), _URLSAFE, 30),
    ("digitalocean_pat", ("dop_v1_", "doo_v1_", "dor_v1_"), _HEX, 64),
    ("shopify_access_token", ("shpat_", "shpca_", "shppa_"), _HEX, 32),
    ("shopify_shared_secret", ("shpss_",), _HEX, 32),
    ("databricks_api_token", ("dapi",), _HEX + "-", 32),
    ("vault_service_token", ("hvs.", "hvb."), _URLSAFE, 24),
    ("age_secret_key", ("AGE-SECRET-KEY-1",), "A-Z0-9", 50),
    ("alibaba_access_key_id", ("LTAI",), _ALNUM, 20),
    ("artifactory_api_key", ("AKCp",), _ALNUM, 60),
    ("clojars_api_token", ("CLOJARS_",), _ALNUM, 40),
    ("doppler_api_token", ("dp.pt.", "dp.st.", "dp.ct."), _ALNUM, 40),
    ("duffel_api_token", ("duffel_test_", "duffel_live_"), _URLSAFE + "=", 40),
    ("dynatrace_api_token", ("dt0c01.",), _ALNUM + ".", 60),
    ("easypost_api_token", ("EZAK", "EZTK"), _ALNUM, 50),
    ("flyio_access_token", ("fo1_", "fm1r_", "fm2_"), _URLSAFE + "+/=", 40),
    ("frameio_api_token", ("fio-u-",), _URLSAFE + "=", 60),
    ("infracost_api_token", ("ico-",), _ALNUM, 32),
    ("linear_api_key", ("lin_api_",), _ALNUM, 40),
    ("notion_api_token", ("ntn_",), _ALNUM, 40),
    ("openshift_user_token", ("sha256~",), _URLSAFE, 43),
    ("perplexity_api_key", ("pplx-",), _ALNUM, 40),
    ("planetscale_password", ("pscale_pw_", "pscale_tkn_", "pscale_oauth_"), _URLSAFE + ".=",
     32),
    ("postman_api_token", ("PMAK-",), _HEX + "-", 50),
    ("prefect_api_token", ("pnu_",), _ALNUM, 36),
    ("pulumi_api_token", ("pul-",), _HEX, 40),
    ("readme_api_token", ("rdme_",), _ALNUM, 60),
    ("rubygems_api_token", ("rubygems_",), _HEX, 48),
    ("scalingo_api_token", ("tk-us-",), _URLSAFE, 40),
    ("sendinblue_api_token", ("xkeysib-",), _ALNUM + "-", 64),
    ("sentry_user_token", ("sntryu_",), _HEX, 64),
    ("sentry_org_token", ("sntrys_",), _ALNUM + "+/=_", 60),
    ("shippo_api_token", ("shippo_live_", "shippo_test_"), _HEX, 40),
    ("square_access_token", ("sq0atp-", "sq0csp-"), _URLSAFE, 22),
    ("new_relic_user_api_key", ("NRAK-",), "A-Z0-9", 27),
    ("adobe_client_secret", ("p8e-",), _ALNUM, 32),
    ("atlassian_api_token", ("ATATT3",), _URLSAFE + "=", 100),
    ("typeform_api_token", ("tfp_",), _URLSAFE + ".=", 40),
    ("yandex_api_key", ("AQVN",), _URLSAFE, 35),
    ("settlemint_personal_access_token", ("sm_pat_", "sm_aat_", "sm_sat_"), _ALNUM, 16),
    ("intra42_client_secret", ("s-s4t2ud-", "s-s4t2af-"), _HEX, 64),
    ("onepassword_service_account_token", ("ops_eyJ",), _ALNUM + "+/=", 200),
    ("huggingface_org_token", ("api_org_",), _ALNUM, 34),
    ("twilio_api_key", ("SK",), "a-f0-9", 32),
)
