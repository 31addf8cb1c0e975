"""redact.py's own prefix and context rules against the shapes their vendors' and tools'
documentation gives (issue #31; the sources are in docs/secrets.md). Every secret is built at
run time from its documented alphabet and length, so this file holds nothing a secret scanner
would flag. A documented shape must be redacted whole with its context kept; a near miss (a
placeholder, prose, a shape one character short) must stay as it is."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from ocm.vault.secrets.redact import find_secrets, redact

HEX = "0123456789abcdef"
DIGITS = "0123456789"
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"


def _rand(alphabet: str, length: int, seed: str = "") -> str:
    rng = random.Random(f"{alphabet}{length}{seed}")
    # A digit first (every alphabet here has digits), so no value reads as a word.
    return rng.choice(DIGITS) + "".join(rng.choice(alphabet) for _ in range(length - 1))


def _b64_key(n_bytes: int) -> str:
    """The base64 text of an `n_bytes` random key, padding included."""
    body = -(-n_bytes * 4 // 3)
    return _rand(B64, body, str(n_bytes)) + "=" * (-body % 4)


# (kind, secret maker, line template with {s} where the secret goes). Shapes whose rule was
# fixed against its documentation come first, then documented shapes the rules already took.
DOCUMENTED: list[tuple[str, Callable[[], str], str]] = [
    # Fixed.
    ("github_token", lambda: "ghp_" + _rand(ALNUM, 10) + "_" + _rand(ALNUM, 25), "GH_TOKEN={s}"),
    ("laravel_app_key", lambda: "base64:" + _b64_key(16), "APP_KEY={s}\nAPP_DEBUG=false"),
    ("laravel_app_key", lambda: "base64:" + _b64_key(32) + ",base64:" + _b64_key(16),
     'APP_PREVIOUS_KEYS="{s}"'),
    ("pgpass_password", lambda: _rand(ALNUM, 6) + "\\:" + _rand(ALNUM, 6),
     "db.example.com:5432:*:alice:{s}\n"),
    ("cli_password", lambda: _rand(ALNUM, 12),
     'openssl pkcs12 -export -in c.pem -passout "pass:{s}" -out c.p12'),
    ("cli_password", lambda: _rand(ALNUM, 12), "openssl rsa -in k.pem -passin 'pass:{s}' -out o"),
    ("cli_password", lambda: _rand(ALNUM, 12), "openssl enc -aes-256-cbc -k {s} -in a -out b"),
    ("cli_password", lambda: _rand(ALNUM, 10), "SQL> CONNECT scott/{s}@orcl"),
    ("cli_password", lambda: _rand(ALNUM, 10), "conn system/{s}\n"),
    ("docker_auth", lambda: _rand(B64, 60), "data:\n  .dockercfg: {s}\n"),
    ("azure_devops_pat", lambda: _rand(ALNUM, 76) + "AZDO" + _rand(ALNUM, 4),
     "AZURE_DEVOPS_EXT_PAT={s}"),
    ("wandb_api_key", lambda: _rand(HEX, 40), "wandb login --host https://wandb.example.com {s}"),
    ("wandb_api_key", lambda: _rand(HEX, 40), 'wandb.login(key="{s}")'),
    ("netrc_password", lambda: _rand(ALNUM, 14), "default login anonymous password {s}\n"),
    ("telegram_bot_token", lambda: _rand(DIGITS, 10) + ":AA" + _rand(URLSAFE, 33),
     "curl https://api.telegram.org/bot{s}/getMe"),
    ("gitlab_token", lambda: "glpat-" + _rand(URLSAFE, 27) + ".01." + _rand(ALNUM, 9),
     "GITLAB_TOKEN={s}"),
    ("pypi_token", lambda: "pypi-AgENdGVzdC5weXBpLm9yZw" + _rand(URLSAFE, 120),
     "[testpypi]\npassword = {s}\n"),
    ("azure_sas_token", lambda: _rand(URLSAFE, 43),
     "https://prod-12.westus.logic.azure.com:443/workflows/0f3c/triggers/manual/paths/invoke"
     "?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={s}"),
    ("discord_webhook", lambda: _rand(DIGITS, 19) + "/" + _rand(URLSAFE, 68),
     "https://discord.com/api/v10/webhooks/{s}"),
    ("cookie", lambda: "_gat=1; sessionid=" + _rand(ALNUM, 32), "Cookie: {s}"),
    ("cookie", lambda: 'sid="' + _rand(ALNUM, 32) + '"; theme=dark', "Cookie: {s}"),
    # Right as written.
    ("rails_secret_key_base", lambda: _rand(HEX, 128), "SECRET_KEY_BASE={s}"),
    ("datadog_key", lambda: _rand(HEX, 32), "curl -H 'DD-API-KEY: {s}' https://api.datadoghq.com"),
    ("algolia_key", lambda: _rand(HEX, 32), "ALGOLIA_ADMIN_KEY={s}"),
    ("authorization_token", lambda: "00" + _rand(URLSAFE, 40), "Authorization: SSWS {s}"),
    ("okta_api_token", lambda: "00" + _rand(URLSAFE, 40), 'export OKTA_AUTH="SSWS {s}"'),
    ("api_key_header", lambda: _rand(HEX, 32),
     'curl -H "api-key: {s}" https://x.openai.azure.com'),
    ("cookie", lambda: "sessionid=" + _rand(ALNUM, 32), "Cookie: {s}"),
    ("cli_password", lambda: _rand(ALNUM, 16), "redis-cli -h cache -p 6379 -a {s} ping"),
    ("cli_password", lambda: _rand(ALNUM, 16), "redis-cli --user alice --pass {s} ping"),
    ("cli_password", lambda: _rand(ALNUM, 20),
     "az login --service-principal -u app -p {s} --tenant t"),
    ("cli_password", lambda: _rand(ALNUM, 10), "sqlplus scott/{s}@//db:1521/orclpdb"),
    ("npm_auth", lambda: _rand(ALNUM, 36), "//npm.example.com/:_authToken={s}"),
    ("docker_auth", lambda: _b64_key(30),
     '{{"auths":{{"https://index.docker.io/v1/":{{"auth":"{s}"}}}}}}'),
    ("kubernetes_secret", lambda: _b64_key(12), "kind: Secret\ndata:\n  password: {s}\n"),
    ("discord_webhook", lambda: _rand(DIGITS, 18) + "/" + _rand(URLSAFE, 68),
     "https://discord.com/api/webhooks/{s}"),
    ("aws_presigned_signature", lambda: _rand(HEX, 64),
     "https://b.s3.amazonaws.com/k?X-Amz-SignedHeaders=host&X-Amz-Signature={s}"),
    ("azure_function_key", lambda: _rand(URLSAFE, 54) + "==",
     "https://fn.azurewebsites.net/api/Hook?code={s}"),
    ("kaggle_key", lambda: _rand(HEX, 32), '{{"username":"jdoe","key":"{s}"}}'),
    ("mailchimp_api_key", lambda: _rand(HEX, 32) + "-us21", "MAILCHIMP_KEY={s}"),
]


@pytest.mark.parametrize("kind,make,template", DOCUMENTED,
                         ids=[f"{kind}-{i}" for i, (kind, *_) in enumerate(DOCUMENTED)])
def test_a_documented_shape_is_redacted_whole_and_its_context_kept(
        kind: str, make: Callable[[], str], template: str) -> None:
    secret = make()
    line = template.format(s=secret)
    before, after = template.split("{s}")
    before, after = before.format(), after.format()
    assert kind in [found for found, *_ in find_secrets(line)]
    cleaned = redact(line)
    assert cleaned == f"{before}[REDACTED:{kind}]{after}"


# Near misses: placeholders, prose, or a shape one step away from the documented one.
NEAR_MISSES: list[tuple[str, Callable[[], str]]] = [
    ("ghp_ one character short", lambda: "see ghp_" + _rand(ALNUM, 35) + " in the log"),
    ("an AES-128 key cut short", lambda: "APP_KEY=base64:" + _rand(B64, 21)),
    ("a .pgpass-looking line of hex (an IPv6 address)", lambda: "fe80:0:0:0:beef1234"),
    ("openssl reading the password from the environment",
     lambda: "openssl rsa -in k.pem -passin env:KEY_PASSPHRASE"),
    ("curl's -k is not openssl's", lambda: "curl -k https://localhost:8443/" + _rand(ALNUM, 12)),
    ("CONNECT in prose", lambda: "Connect client/server\n"),
    ("the npm CI placeholder", lambda: "//registry.npmjs.org/:_authToken=${NPM_TOKEN}"),
    ("the Secret type names dockercfg", lambda: "type: kubernetes.io/dockercfg"),
    ("AZDO one position early", lambda: _rand(ALNUM, 75) + "AZDO" + _rand(ALNUM, 4)),
    ("--askpass takes no value", lambda: "redis-cli --askpass scan0 MATCH 'user:*'"),
    ("wandb login reading the key elsewhere", lambda: "wandb login --relogin"),
    ("wandb.login with a variable", lambda: 'wandb.login(key=os.environ["WANDB_KEY"])'),
    ("a default password policy in prose", lambda: "the default password policy applies"),
    ("a Telegram bot id too short", lambda: "bot1234567:AA" + _rand(URLSAFE, 33)),
    ("glpat- one character short", lambda: "glpat-" + _rand(URLSAFE, 19)),
    ("a Cookie header with no session value", lambda: "Cookie: theme=dark; lang=en"),
    ("a quoted string that is no RFC 6265 cookie value (http.cookies docs)",
     lambda: 'Set-Cookie: keebler="E=everybody; L=\\"Loves\\"; fudge=\\012;"'),
    ("a short sig= in prose", lambda: "see ?sig=abc-def in the docs"),
    ("a TestPyPI token cut short", lambda: "pypi-AgENdGVzdC5weXBpLm9yZw" + _rand(URLSAFE, 49)),
]


@pytest.mark.parametrize("why,make", NEAR_MISSES, ids=[why for why, _ in NEAR_MISSES])
def test_a_near_miss_stays(why: str, make: Callable[[], str]) -> None:
    line = make()
    assert find_secrets(line) == [], why
    assert redact(line) == line
