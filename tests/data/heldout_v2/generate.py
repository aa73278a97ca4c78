"""Writes secrets.jsonl and lookalikes.jsonl beside this file (issue 32, item 1).

Written from vendors' published token shapes, before reading the scrubber's catalogue, detect-secrets'
plugins or betterleaks' rules; committed, with its output, before the first measurement. Every value
is random characters in a real format's shape (seeded, so the files are reproducible), never a
real secret. Run once; the files are then never edited.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from pathlib import Path

R = random.Random(3220)
HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits
UPALNUM = string.ascii_uppercase + string.digits
B64URL = ALNUM + "-_"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def r(alphabet: str, n: int) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


# format -> (maker, the name a config would give it). Shapes as vendors document them.
FORMATS = {
    # the misses issue 32 names, standalone
    "mailgun_api_key": (lambda: "key-" + r(HEX, 32), "MAILGUN_API_KEY"),
    "age_secret_key": (lambda: "AGE-SECRET-KEY-1" + r(BECH32, 58), "AGE_KEY"),
    "stripe_webhook_secret": (lambda: "whsec_" + r(ALNUM, 32), "STRIPE_WEBHOOK_SECRET"),
    "shopify_admin_token": (lambda: "shpat_" + r(HEX, 32), "SHOPIFY_TOKEN"),
    "shopify_shared_secret": (lambda: "shpss_" + r(HEX, 32), "SHOPIFY_SHARED_SECRET"),
    "digitalocean_pat": (lambda: "dop_v1_" + r(HEX, 64), "DO_TOKEN"),
    "digitalocean_oauth": (lambda: "doo_v1_" + r(HEX, 64), "DO_OAUTH"),
    "grafana_service_account": (lambda: "glsa_" + r(ALNUM, 32) + "_" + r(HEX, 8), "GRAFANA_TOKEN"),
    "telegram_bot": (lambda: str(R.randint(100000000, 9999999999)) + ":AA" + r(B64URL, 33), "TELEGRAM_BOT_TOKEN"),
    "pypi_short": (lambda: "pypi-AgEIcHlwaS5vcmc" + r(B64URL, 60), "PYPI_TOKEN"),
    # other vendors than tests/data/heldout
    "gitlab_runner": (lambda: "glrt-" + r(B64URL, 20), "RUNNER_TOKEN"),
    "gitlab_deploy": (lambda: "gldt-" + r(B64URL, 20), "DEPLOY_TOKEN"),
    "gitlab_trigger": (lambda: "glptt-" + r(HEX, 40), "TRIGGER_TOKEN"),
    "sentry_user_token": (lambda: "sntryu_" + r(HEX, 64), "SENTRY_AUTH_TOKEN"),
    "figma_pat": (lambda: "figd_" + r(B64URL, 40), "FIGMA_TOKEN"),
    "airtable_pat": (lambda: "pat" + r(ALNUM, 14) + "." + r(HEX, 64), "AIRTABLE_TOKEN"),
    "newrelic_user_key": (lambda: "NRAK-" + r(UPALNUM, 27), "NEW_RELIC_API_KEY"),
    "flyio_token": (lambda: "fo1_" + r(B64URL, 43), "FLY_API_TOKEN"),
    "planetscale_token": (lambda: "pscale_tkn_" + r(B64URL, 43), "PLANETSCALE_TOKEN"),
    "perplexity": (lambda: "pplx-" + r(ALNUM, 48), "PPLX_API_KEY"),
    "openrouter": (lambda: "sk-or-v1-" + r(HEX, 64), "OPENROUTER_API_KEY"),
    "slack_app_token": (lambda: "xapp-1-A" + r(UPALNUM, 10) + "-" + str(R.randint(10**12, 10**13 - 1)) + "-" + r(HEX, 64), "SLACK_APP_TOKEN"),
    "shippo_live": (lambda: "shippo_live_" + r(HEX, 40), "SHIPPO_API_KEY"),
    "contentful_pat": (lambda: "CFPAT-" + r(B64URL, 43), "CONTENTFUL_TOKEN"),
    "alibaba_access_key": (lambda: "LTAI" + r(ALNUM, 20), "ALIBABA_ACCESS_KEY_ID"),
    "azure_ad_client_secret": (lambda: r(ALNUM, 3) + str(R.randint(0, 9)) + "Q~" + r(ALNUM + "_~.-", 34), "AZURE_CLIENT_SECRET"),
    "jfrog_api_key": (lambda: "AKCp" + r(ALNUM, 69), "ARTIFACTORY_API_KEY"),
    "langsmith": (lambda: "lsv2_pt_" + r(HEX, 32) + "_" + r(HEX, 10), "LANGSMITH_API_KEY"),
    "rubygems": (lambda: "rubygems_" + r(HEX, 48), "GEM_HOST_API_KEY"),
    "dockerhub_pat": (lambda: "dckr_pat_" + r(B64URL, 27), "DOCKERHUB_TOKEN"),
    "buildkite": (lambda: "bkua_" + r(HEX, 40), "BUILDKITE_TOKEN"),
    "readme": (lambda: "rdme_" + r(HEX, 70), "README_API_KEY"),
    "typeform": (lambda: "tfp_" + r(ALNUM, 44) + "_" + r(ALNUM, 14), "TYPEFORM_TOKEN"),
    "adafruit_io": (lambda: "aio_" + r(ALNUM, 28), "ADAFRUIT_IO_KEY"),
    "google_oauth_access": (lambda: "ya29." + r(B64URL, 120), "GOOGLE_ACCESS_TOKEN"),
    "mapbox_secret": (lambda: "sk.eyJ1Ijoi" + r(B64URL, 40) + "." + r(B64URL, 22), "MAPBOX_SECRET_TOKEN"),
}

HOSTS = ["api.example.com", "hooks.example.net", "ci.internal.example.org"]


def contexts(secret: str, name: str) -> dict[str, str]:
    key = name.lower()
    host = R.choice(HOSTS)
    return {
        "alone": secret,
        "json": json.dumps({"service": "billing", key: secret, "retries": 3}),
        "yaml": f"deploy:\n  region: eu-west-1\n  {key}: {secret}\n  replicas: 2",
        "url": f"https://{host}/v2/export?format=csv&{key}={secret}&page=4",
        "header": f"curl -s -H 'X-Request-Id: 42' -H 'Authorization: Bearer {secret}' https://{host}/v1/me",
        "log": f"2026-11-30T14:02:{R.randint(10, 59)}Z INFO worker[{R.randint(100, 999)}] loaded credentials {secret} for tenant acme (took {R.randint(2, 90)} ms)",
    }


def secrets() -> list[dict]:
    rows = []
    for fmt, (make, name) in FORMATS.items():
        for context, _ in contexts("x", name).items():
            secret = make()
            rows.append({"format": fmt, "context": context, "text": contexts(secret, name)[context], "secrets": [secret]})
    return rows


def b64_words() -> str:
    words = R.choice(["the quick brown fox jumps over the lazy dog", "order confirmed and shipped today",
                      "please restart the staging cluster", "hello world from the support team"])
    return base64.b64encode(words.encode()).decode()


LOOKALIKES = {
    "git_sha1": lambda: f"Reverted {r(HEX, 40)} after the flaky test; cherry-picked onto release/2.3.",
    "git_short_sha": lambda: f"[main {r(HEX, 7)}] Fix pagination of the orders endpoint",
    "merge_log": lambda: f"Merge: {r(HEX, 7)} {r(HEX, 7)}\ncommit {r(HEX, 40)}",
    "uuid": lambda: f"request_id={uuid.UUID(int=R.getrandbits(128), version=4)} status=200 path=/v1/orders",
    "uuid_json": lambda: json.dumps({"order_id": str(uuid.UUID(int=R.getrandbits(128), version=4)), "status": "shipped"}),
    "base64_words": lambda: f"payload: {b64_words()}",
    "base64_words_json": lambda: json.dumps({"body": b64_words(), "encoding": "base64"}),
    "version": lambda: f"upgraded skillbank from {R.randint(0, 3)}.{R.randint(0, 20)}.{R.randint(0, 9)} to v{R.randint(1, 4)}.{R.randint(0, 20)}.{R.randint(0, 9)}-rc.{R.randint(1, 5)}+build.{R.randint(20260101, 20261231)}",
    "sha256_file": lambda: f"{r(HEX, 64)}  dist/skillbank-{R.randint(0, 9)}.{R.randint(0, 9)}.{R.randint(0, 9)}-py3-none-any.whl",
    "npm_integrity": lambda: f'"integrity": "sha512-{base64.b64encode(R.randbytes(64)).decode()}"',
    "docker_digest": lambda: f"pulled registry.example.com/web@sha256:{r(HEX, 64)}",
    "ulid": lambda: f"event {r('0123456789ABCDEFGHJKMNPQRSTVWXYZ', 26)} recorded",
    "k8s_pod": lambda: f"pod/web-{r(HEX, 9)}-{r(string.ascii_lowercase + string.digits, 5)} restarted 3 times",
    "aws_arn": lambda: f"assumed arn:aws:iam::{R.randint(10**11, 10**12 - 1)}:role/deploy-{r(string.ascii_lowercase, 6)}",
    "stripe_object_id": lambda: f"refunded charge ch_{r(ALNUM, 24)} for customer cus_{r(ALNUM, 14)}",
    "telegram_chat_id": lambda: f"sent to chat_id=-100{R.randint(10**9, 10**10 - 1)} message_id={R.randint(1, 99999)}",
    "ssh_public_key": lambda: f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{r(ALNUM + '+/', 43)} deploy@ci",
    "age_public_key": lambda: f"recipient: age1{r(BECH32.lower(), 58)}",
    "prose_prefix": lambda: R.choice([
        "Mailgun keys start with key- and Stripe webhook secrets with whsec_; never paste them in tickets.",
        "Rotate the AGE-SECRET-KEY after each release and store the token in the vault.",
        "A shpat_ token is an Admin API access token; ask the owner for a new one.",
        "Set GRAFANA_TOKEN to a glsa_ service account token, not a password.",
        "The pypi- prefix marks an upload token; use trusted publishing instead.",
    ]),
    "ids_in_url": lambda: f"https://shop.example.com/orders/{R.randint(10**6, 10**7)}/items/{r(HEX, 24)}?ref=email",
    "hex_color_css": lambda: f"color: #{r(HEX, 6)}; background: #{r(HEX, 6)};",
}


def lookalikes() -> list[dict]:
    return [{"kind": kind, "text": make()} for kind, make in LOOKALIKES.items() for _ in range(4)]


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    (here / "secrets.jsonl").write_text("".join(json.dumps(row) + "\n" for row in secrets()), encoding="utf-8")
    (here / "lookalikes.jsonl").write_text("".join(json.dumps(row) + "\n" for row in lookalikes()), encoding="utf-8")
