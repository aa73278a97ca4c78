"""Third held-out secret set for the scrubber (issue 32).

Written for issue 32 as the third held-out secret set. The token shapes come
from what the vendors themselves publish about their key and token formats
(prefixes, lengths, alphabets), written blind: without looking at the
scrubber's catalogue of rules, and without looking at the rule lists of
detect-secrets, gitleaks or betterleaks. This script and its output
(secrets.jsonl, lookalikes.jsonl) are committed together before the first
measurement and are never edited afterwards; a later set gets a new folder.

Every value is random characters in a real format's shape (seeded, so the
output is reproducible). None of them is, or was ever, a real secret.

Run from anywhere:  python3 tests/data/heldout_secrets_v3/generate.py
It writes secrets.jsonl and lookalikes.jsonl beside itself.
"""

import base64
import json
import os
import random
import re
import string
import struct
import uuid
import zlib
from urllib.parse import urlsplit

R = random.Random(4430)

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DIG = string.digits
ALNUM = UP + LO + DIG
HEXL = "0123456789abcdef"
HEXU = "0123456789ABCDEF"
B64 = ALNUM + "+/"
B64U = ALNUM + "-_"
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
BASE62 = DIG + UP + LO


def rs(alpha, n):
    return "".join(R.choice(alpha) for _ in range(n))


def rbytes(n):
    return bytes(R.getrandbits(8) for _ in range(n))


def b64(b):
    return base64.b64encode(b).decode()


def b64u(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def ruuid():
    return str(uuid.UUID(int=R.getrandbits(128), version=4))


def ts():
    return "%d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (
        R.choice([2024, 2025]), R.randint(1, 12), R.randint(1, 28),
        R.randint(0, 23), R.randint(0, 59), R.randint(0, 59), R.randint(0, 999))


def base62(n, width):
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = BASE62[r] + out
    return out.rjust(width, "0")


# ---------------------------------------------------------------------------
# value generators: one per format, each returns the secret string
# ---------------------------------------------------------------------------

def g_aws_id():
    return R.choice(["AKIA", "AKIA", "AKIA", "ASIA"]) + rs(B32, 16)


def g_aws_secret():
    return rs(ALNUM + "+/", 40)


def g_gcp_api_key():
    return "AIzaSy" + rs(B64U, 33)


def g_google_client_secret():
    return "GOCSPX-" + rs(B64U, 28)


def g_azure_storage_key():
    return b64(rbytes(64))  # 88 chars, ends with '=='


def g_azure_ad_secret():
    return rs(ALNUM, 3) + R.choice(DIG) + "Q~" + rs(ALNUM + "_~.-", 34)


def g_digitalocean():
    return R.choice(["dop_v1_", "dop_v1_", "doo_v1_"]) + rs(HEXL, 64)


def g_vault():
    if R.random() < 0.8:
        return "hvs.CAESI" + rs(B64U, 86)
    return "hvb.AAAAAQ" + rs(B64U, 128)


def g_stripe():
    c = R.random()
    if c < 0.35:
        return "sk_live_" + rs(ALNUM, 24)
    if c < 0.75:
        return "sk_live_51" + rs(ALNUM, 97)
    return "rk_live_51" + rs(ALNUM, 97)


def g_square():
    return "EAAA" + rs(B64U, 60)


def g_braintree():
    return "access_token$production$%s$%s" % (rs(LO + DIG, 16), rs(HEXL, 32))


def g_shopify():
    return R.choice(["shpat_", "shpat_", "shpca_", "shppa_", "shpss_"]) + rs(HEXL, 32)


def g_slack():
    c = R.random()
    d = lambda: str(R.randint(10 ** 9, 10 ** 13 - 1))
    if c < 0.55:
        return "xoxb-%s-%s-%s" % (d(), d(), rs(ALNUM, 24))
    if c < 0.85:
        return "xoxp-%s-%s-%s-%s" % (d(), d(), d(), rs(HEXL, 32))
    return "xapp-1-A%s-%s-%s" % (rs(UP + DIG, 10), d(), rs(HEXL, 64))


def g_slack_webhook_token():
    return rs(ALNUM, 24)


def slack_webhook_url(tok):
    return "https://hooks.slack.com/services/T%s/B%s/%s" % (rs(UP + DIG, 8), rs(UP + DIG, 10), tok)


def g_discord():
    snowflake = str(R.randint(7 * 10 ** 17, 1_399_999_999_999_999_999))
    first = base64.b64encode(snowflake.encode()).decode().rstrip("=")
    return "%s.%s.%s" % (first, rs(B64U, 6), rs(B64U, 38))


def g_telegram():
    return "%d:AA%s" % (R.randint(10 ** 8, 8 * 10 ** 9), rs(B64U, 33))


def g_sendgrid():
    return "SG.%s.%s" % (rs(B64U, 22), rs(B64U, 43))


def g_mailgun():
    if R.random() < 0.5:
        return "key-" + rs(HEXL, 32)
    return "%s-%s-%s" % (rs(HEXL, 32), rs(HEXL, 8), rs(HEXL, 8))


def g_twilio_token():
    return rs(HEXL, 32)


def g_brevo():
    return "xkeysib-%s-%s" % (rs(HEXL, 64), rs(ALNUM, 16))


def g_github_prefixed():
    prefix = R.choice(["ghp_", "ghp_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"])
    body = rs(ALNUM, 30)
    return prefix + body + base62(zlib.crc32(body.encode()), 6)


def g_github_fine_grained():
    return "github_pat_11%s_%s" % (rs(UP + DIG, 20), rs(ALNUM, 59))


def g_gitlab():
    c = R.random()
    if c < 0.5:
        return "glpat-" + rs(B64U, 20)
    if c < 0.65:
        return "glpat-%s.01.%s" % (rs(B64U, 36), rs(LO + DIG, 9))
    if c < 0.85:
        return "glrt-" + rs(B64U, 20)
    return "gldt-" + rs(B64U, 20)


def g_npm():
    return "npm_" + rs(ALNUM, 36)


def g_pypi():
    return "pypi-AgEIcHlwaS5vcmcCJ" + rs(B64U, R.randint(150, 190))


def g_dockerhub():
    return "dckr_pat_" + rs(B64U, 27)


def g_nuget():
    return "oy2" + rs(LO + DIG, 43)


def g_datadog():
    return rs(HEXL, 32)


def g_newrelic():
    if R.random() < 0.6:
        return "NRAK-" + rs(UP + DIG, 27)
    return rs(HEXL, 36) + "NRAL"


def g_sentry():
    if R.random() < 0.5:
        return "sntryu_" + rs(HEXL, 64)
    org = R.choice(["acme", "northwind", "globex-inc", "initech"])
    payload = json.dumps({"iat": round(R.uniform(1.70e9, 1.75e9), 6),
                          "url": "https://sentry.io",
                          "region_url": "https://%s.sentry.io" % R.choice(["us", "de"]),
                          "org": org}, separators=(",", ":"))
    return "sntrys_%s_%s" % (b64(payload.encode()), rs(ALNUM + "+/", 43))


def g_grafana():
    if R.random() < 0.55:
        return "glsa_%s_%s" % (rs(ALNUM, 32), rs(HEXL, 8))
    payload = json.dumps({"o": str(R.randint(100000, 999999)),
                          "n": "stack-%d-hm-%s" % (R.randint(100000, 999999), R.choice(["read", "write", "metrics-push"])),
                          "k": rs(ALNUM, 24),
                          "m": {"r": R.choice(["prod-us-east-0", "prod-eu-west-2", "prod-ap-southeast-1"])}},
                         separators=(",", ":"))
    return "glc_" + b64(payload.encode())


def g_dynatrace():
    return "dt0c01.%s.%s" % (rs(UP + DIG, 24), rs(UP + DIG, 64))


def g_openai():
    c = R.random()
    if c < 0.5:
        return "sk-proj-%sT3BlbkFJ%s" % (rs(B64U, 74), rs(B64U, 74))
    if c < 0.8:
        return "sk-%sT3BlbkFJ%s" % (rs(ALNUM, 20), rs(ALNUM, 20))
    return "sk-svcacct-%sT3BlbkFJ%s" % (rs(B64U, 74), rs(B64U, 74))


def g_anthropic():
    return "sk-ant-api03-" + rs(B64U, 93) + "AA"


def g_huggingface():
    return "hf_" + rs(UP + LO, 34)


def g_groq():
    return "gsk_" + rs(ALNUM, 52)


def g_db_password():
    n = R.randint(14, 30)
    s = rs(ALNUM, n)
    if R.random() < 0.5:  # a few URL-unreserved punctuation marks
        i = R.randint(1, n - 2)
        s = s[:i] + R.choice("-_.~") + s[i + 1:]
    return s


def g_mongo_password():
    return rs(ALNUM, R.randint(16, 24))


def g_databricks():
    return "dapi" + rs(HEXL, 32)


def g_okta():
    return "00" + rs(B64U, 40)


def g_doppler():
    c = R.random()
    if c < 0.6:
        return "dp.st.%s.%s" % (R.choice(["prd", "stg", "dev", "ci"]), rs(ALNUM, 43))
    if c < 0.85:
        return "dp.pt." + rs(ALNUM, 43)
    return "dp.ct." + rs(ALNUM, 43)


def g_age():
    return "AGE-SECRET-KEY-1" + rs(BECH32.upper(), 58)


def g_jwt():
    alg = R.choice(["HS256", "HS256", "RS256", "ES256"])
    header = {"alg": alg, "typ": "JWT"}
    if alg != "HS256":
        header["kid"] = rs(B64U, 22)
    now = R.randint(1_700_000_000, 1_760_000_000)
    payload = R.choice([
        {"sub": ruuid(), "iat": now, "exp": now + 3600,
         "iss": "https://auth.%s.example/" % R.choice(["acme", "orbit", "tally"]), "scope": "read:orders write:orders"},
        {"iss": "supabase", "ref": rs(LO, 20), "role": "service_role", "iat": now, "exp": now + 315360000},
        {"sub": "user_%d" % R.randint(1000, 99999), "email": "dev%d@corp.example" % R.randint(1, 99),
         "iat": now, "exp": now + 900, "aud": "api"},
    ])
    sig_len = {"HS256": 32, "RS256": 256, "ES256": 64}[alg]
    return "%s.%s.%s" % (b64u(json.dumps(header, separators=(",", ":")).encode()),
                         b64u(json.dumps(payload, separators=(",", ":")).encode()),
                         b64u(rbytes(sig_len)))


def g_password():
    c = R.random()
    if c < 0.45:
        return rs(ALNUM + "!%^*-_.+=~", R.randint(12, 24))
    if c < 0.75:
        words = ["copper", "lantern", "orbit", "maple", "quartz", "velvet", "harbor", "saffron",
                 "tundra", "glacier", "ember", "falcon", "meadow", "cobalt", "prism"]
        w = R.sample(words, 3)
        return "%s-%s-%s%d%s" % (w[0].capitalize(), w[1], w[2], R.randint(10, 99), R.choice("!*.%"))
    return rs(ALNUM, R.randint(16, 32))


def g_password_urlsafe():
    return rs(ALNUM + "-_.~", R.randint(14, 24))


def g_generic_secret():
    c = R.random()
    if c < 0.3:
        return rs(HEXL, R.choice([32, 64]))
    if c < 0.55:
        return b64(rbytes(32))
    if c < 0.8:
        return rs(ALNUM, R.randint(32, 48))
    return rs(LO + DIG + "!@%^&*(-_=+)", 50)  # Django-style SECRET_KEY


# --- PEM private keys -------------------------------------------------------

def _wrap(s, width):
    return [s[i:i + width] for i in range(0, len(s), width)]


def _ssh_string(b):
    return struct.pack(">I", len(b)) + b


def pem_block(kind):
    """Return (header_label, body_lines) for a random private key of `kind`."""
    if kind == "rsa":
        der = bytes.fromhex("308204a40201000282010100") + rbytes(1180)
        return "RSA PRIVATE KEY", _wrap(b64(der), 64)
    if kind == "pkcs8":
        der = bytes.fromhex("308204be020100300d06092a864886f70d0101010500048204a8308204a40201000282010100") + rbytes(1178)
        return "PRIVATE KEY", _wrap(b64(der), 64)
    if kind == "ec":
        der = (bytes.fromhex("30770201010420") + rbytes(32)
               + bytes.fromhex("a00a06082a8648ce3d030107a144034200") + b"\x04" + rbytes(64))
        return "EC PRIVATE KEY", _wrap(b64(der), 64)
    if kind == "openssh":
        pub = rbytes(32)
        seed = rbytes(32)
        pubblob = _ssh_string(b"ssh-ed25519") + _ssh_string(pub)
        check = rbytes(4)
        priv = (check + check + _ssh_string(b"ssh-ed25519") + _ssh_string(pub)
                + _ssh_string(seed + pub) + _ssh_string(b"deploy@build-%02d" % R.randint(1, 40)))
        pad = 1
        while len(priv) % 8:
            priv += bytes([pad])
            pad += 1
        blob = (b"openssh-key-v1\x00" + _ssh_string(b"none") + _ssh_string(b"none") + _ssh_string(b"")
                + struct.pack(">I", 1) + _ssh_string(pubblob) + _ssh_string(priv))
        return "OPENSSH PRIVATE KEY", _wrap(b64(blob), 70)
    raise ValueError(kind)


def pem_text(kind, sep="\n", indent=""):
    label, lines = pem_block(kind)
    parts = ["-----BEGIN %s-----" % label] + lines + ["-----END %s-----" % label]
    return (sep + indent).join(parts)


# ---------------------------------------------------------------------------
# filler for the text around a secret
# ---------------------------------------------------------------------------

SVCS = ["billing-api", "orders-worker", "ingest", "notify-svc", "gateway", "etl-nightly",
        "checkout", "search-indexer", "auth-proxy", "report-gen"]
NEIGH_ENV = ["NODE_ENV=production", "LOG_LEVEL=info", "PORT=8080", "APP_NAME=orders-api",
             "AWS_REGION=eu-west-1", "TZ=UTC", "FEATURE_FLAGS=beta,search", "WORKERS=4"]
YAML_EXTRA = ["timeout: 30", "region: eu-west-1", "enabled: true", "retries: 3",
              "endpoint: https://api.internal.example", "log_level: info"]
PREAMBLES = ["Here is the key from the dashboard:", "new token after rotation:",
             "paste this into the CI secret settings:", "# generated for the staging box",
             "ok this one works for me ->", "token (expires in 90 days):"]

TOK = {
    "ts": ts,
    "uuid": ruuid,
    "hex8": lambda: rs(HEXL, 8),
    "hex12": lambda: rs(HEXL, 12),
    "n3": lambda: str(R.randint(100, 999)),
    "n6": lambda: str(R.randint(100000, 999999)),
    "acct": lambda: str(R.randint(10 ** 11, 10 ** 12 - 1)),
    "svc": lambda: R.choice(SVCS),
    "user": lambda: R.choice(["app", "svc_orders", "reporting", "admin", "etl", "django"]),
    "dbhost": lambda: R.choice(["db.internal", "10.0.3.17", "pg-primary.prod.svc.cluster.local",
                                "orders.c9x2kq1lmz0p.eu-west-1.rds.amazonaws.com", "localhost"]),
    "db": lambda: R.choice(["orders", "app_production", "analytics", "users"]),
    "cluster": lambda: "cluster%d.%s" % (R.randint(0, 3), rs(LO + DIG, 5)),
    "region": lambda: R.choice(["us-east-1", "eu-west-1", "ap-southeast-2", "eu-central-1"]),
    "date8": lambda: "2024%02d%02d" % (R.randint(1, 12), R.randint(1, 28)),
    "sid": lambda: "AC" + rs(HEXL, 32),
    "appid": ruuid,
    "storacct": lambda: R.choice(["acmeprodstore", "logsarchive01", "mediaassetsweu"]),
}

GEN = {}  # filled below: format name -> generator, for {S:name} secondary secrets


def fill(template, v, extra):
    out = template.replace("{v}", v)

    def sec(m):
        s = GEN[m.group(1)]()
        extra.append(s)
        return s

    out = re.sub(r"\{S:(\w+)\}", sec, out)
    return re.sub(r"\{(\w+)\}", lambda m: TOK[m.group(1)](), out)


# ---------------------------------------------------------------------------
# generic context renderers
# ---------------------------------------------------------------------------

def r_line(f, v):
    if R.random() < 0.5:
        return v
    return "%s\n%s" % (R.choice(PREAMBLES), v)


def r_env(f, v):
    name = R.choice(f["env"])
    q = f.get("env_quote")
    style = R.randint(0, 3)
    if q == "'" or (q is None and style == 2):
        line = "%s='%s'" % (name, v)
    elif style == 1:
        line = 'export %s="%s"' % (name, v)
    else:
        line = "%s=%s" % (name, v)
    if style == 3:
        a, b = R.sample(NEIGH_ENV, 2)
        line = "%s\n%s\n%s" % (a, line, b)
    return line


def r_json(f, v):
    key = R.choice(f["key"])
    inner = {key: v}
    extra = R.choice([("timeout", 30), ("enabled", True), ("region", "eu-west-1"), ("retries", 3)])
    inner[extra[0]] = extra[1]
    if R.random() < 0.5:
        doc = {f["parent"]: inner, "version": R.randint(1, 4)}
    else:
        doc = dict({"name": R.choice(SVCS)}, **inner)
    return json.dumps(doc, indent=R.choice([None, 2]))


def r_yaml(f, v):
    key = R.choice(f["key"])
    q = R.choice(["", '"', "'"])
    e1, e2 = R.sample(YAML_EXTRA, 2)
    return "%s:\n  %s\n  %s: %s%s%s\n  %s" % (f["parent"], e1, key, q, v, q, e2)


def r_url(f, v):
    base = f["url"]
    sep = "&" if "?" in base else "?"
    url = "%s%s%s=%s" % (base, sep, f["param"], v)
    if R.random() < 0.4:
        url += "&" + R.choice(["format=json", "page=2", "limit=50", "lang=en"])
    style = R.randint(0, 3)
    if style == 0:
        return url
    if style == 1:
        return "curl -s '%s'" % url
    if style == 2:
        return "%s INFO  [%s] GET %s -> 200 (%d ms)" % (ts(), R.choice(SVCS), url, R.randint(8, 900))
    return "requests.get(\"%s\", timeout=10)" % url


def r_header(f, v):
    name, scheme = f["header"]
    api = f["api"]
    parts = urlsplit(api)
    style = R.randint(0, 3)
    if style == 0:
        return 'curl -s -H "%s: %s%s" %s' % (name, scheme, v, api)
    if style == 1:
        return "%s %s HTTP/1.1\nHost: %s\n%s: %s%s\nAccept: application/json" % (
            R.choice(["GET", "POST"]), parts.path or "/", parts.netloc, name, scheme, v)
    if style == 2:
        return "http GET %s '%s:%s%s'" % (api, name, scheme, v)
    return "headers = {\"%s\": \"%s%s\", \"Content-Type\": \"application/json\"}" % (name, scheme, v)


def r_log(f, v):
    svc = f.get("svc") or R.choice(SVCS)
    key = f.get("logkey") or R.choice(f["key"])
    style = R.randint(0, 3)
    if style == 0:
        return "%s INFO  [%s] loaded credentials %s=%s" % (ts(), svc, key, v)
    if style == 1:
        return "[%s] ERROR %s - upstream returned 401 Unauthorized; %s was %s" % (ts(), svc, key, v)
    if style == 2:
        return "%s DEBUG %s config dump: %s" % (ts(), svc, json.dumps({key: v, "retries": 3}))
    return "%s WARN  %s retrying request (attempt 2/5)\n%s DEBUG %s using %s %s" % (
        ts(), svc, ts(), svc, key, v)


RENDER = {"line": r_line, "env": r_env, "json": r_json, "yaml": r_yaml,
          "url_query": r_url, "http_header": r_header, "log": r_log}


# ---------------------------------------------------------------------------
# the formats
# ---------------------------------------------------------------------------

FORMATS = [
    # ---- cloud providers and infrastructure
    dict(name="aws_access_key_id", gen=g_aws_id,
         contexts=["line", "env", "json", "yaml", "log", "url_query"],
         env=["AWS_ACCESS_KEY_ID"], key=["aws_access_key_id", "AccessKeyId"], parent="aws",
         custom={
             "json": ['{"Credentials": {"AccessKeyId": "{v}", "SecretAccessKey": "{S:aws_secret_access_key}", '
                      '"Expiration": "2025-03-01T12:00:00Z"}}'],
             "log": ["{ts} DEBUG botocore.auth CanonicalRequest signed: Authorization: AWS4-HMAC-SHA256 "
                     "Credential={v}/{date8}/{region}/s3/aws4_request, SignedHeaders=host;x-amz-date, "
                     "Signature=<omitted>"],
             "url_query": ["https://acme-exports.s3.{region}.amazonaws.com/report.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                           "&X-Amz-Credential={v}%2F{date8}%2F{region}%2Fs3%2Faws4_request&X-Amz-Date={date8}T101500Z"
                           "&X-Amz-Expires=3600&X-Amz-SignedHeaders=host"],
         }),
    dict(name="aws_secret_access_key", gen=g_aws_secret,
         contexts=["env", "json", "yaml", "cli_flag", "log"],
         env=["AWS_SECRET_ACCESS_KEY"], key=["aws_secret_access_key", "secret_access_key"], parent="aws",
         custom={
             "env": ["AWS_ACCESS_KEY_ID={S:aws_access_key_id}\nAWS_SECRET_ACCESS_KEY={v}\nAWS_DEFAULT_REGION={region}",
                     "AWS_SECRET_ACCESS_KEY={v}"],
             "cli_flag": ["s3cmd --access_key={S:aws_access_key_id} --secret_key={v} ls s3://acme-backups",
                          "rclone lsd s3: --s3-access-key-id {S:aws_access_key_id} --s3-secret-access-key {v}"],
         }),
    dict(name="gcp_api_key", gen=g_gcp_api_key,
         contexts=["url_query", "http_header", "json", "env", "log"],
         env=["GOOGLE_API_KEY", "GEMINI_API_KEY", "MAPS_API_KEY"], key=["apiKey", "api_key"], parent="firebase",
         url="https://maps.googleapis.com/maps/api/geocode/json?address=Berlin", param="key",
         header=("x-goog-api-key", ""),
         api="https://generativelanguage.googleapis.com/v1beta/models/gemini-1.5-flash:generateContent"),
    dict(name="google_oauth_client_secret", gen=g_google_client_secret,
         contexts=["json", "env", "yaml", "cli_flag", "url_query"],
         env=["GOOGLE_CLIENT_SECRET"], key=["client_secret"], parent="google_oauth",
         url="https://oauth2.googleapis.com/token?grant_type=refresh_token&client_id=581204377611-q3kd0c2v.apps.googleusercontent.com",
         param="client_secret",
         custom={
             "json": ['{"installed": {"client_id": "{n6}{n6}-{hex12}.apps.googleusercontent.com", '
                      '"project_id": "acme-prod", "client_secret": "{v}", '
                      '"redirect_uris": ["http://localhost"]}}'],
             "cli_flag": ["./oauth-setup --client-id {n6}{n6}-{hex12}.apps.googleusercontent.com --client-secret {v}"],
         }),
    dict(name="azure_storage_account_key", gen=g_azure_storage_key,
         contexts=["env", "json", "yaml", "cli_flag", "log"],
         custom={
             "env": ['AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=https;AccountName={storacct};'
                     'AccountKey={v};EndpointSuffix=core.windows.net"'],
             "json": ['{"ConnectionStrings": {"BlobStorage": "DefaultEndpointsProtocol=https;AccountName={storacct};'
                      'AccountKey={v};EndpointSuffix=core.windows.net"}, "Logging": {"LogLevel": {"Default": "Information"}}}'],
             "yaml": ["storage:\n  account_name: {storacct}\n  account_key: {v}\n  container: uploads"],
             "cli_flag": ["az storage blob upload --account-name {storacct} --account-key {v} "
                          "--container-name backups --file dump.sql.gz --name dump.sql.gz"],
             "log": ["{ts} ERROR [{svc}] BlobServiceClient.from_connection_string failed for "
                     "'DefaultEndpointsProtocol=https;AccountName={storacct};AccountKey={v};"
                     "EndpointSuffix=core.windows.net': container not found"],
         }),
    dict(name="azure_ad_client_secret", gen=g_azure_ad_secret,
         contexts=["env", "json", "yaml", "cli_flag", "log"],
         env=["AZURE_CLIENT_SECRET", "ARM_CLIENT_SECRET"], key=["ClientSecret", "client_secret"], parent="AzureAd",
         custom={
             "json": ['{"AzureAd": {"Instance": "https://login.microsoftonline.com/", "TenantId": "{uuid}", '
                      '"ClientId": "{uuid}", "ClientSecret": "{v}"}}'],
             "cli_flag": ["az login --service-principal -u {appid} -p {v} --tenant {uuid}",
                          "az login --service-principal --username {appid} --password={v} --tenant {uuid}"],
             "log": ["{ts} DEBUG msal POST https://login.microsoftonline.com/{uuid}/oauth2/v2.0/token "
                     "body=client_id={appid}&client_secret={v}&grant_type=client_credentials"
                     "&scope=https%3A%2F%2Fgraph.microsoft.com%2F.default"],
         }),
    dict(name="digitalocean_token", gen=g_digitalocean,
         contexts=["env", "cli_flag", "http_header", "yaml", "line"],
         env=["DIGITALOCEAN_ACCESS_TOKEN", "DO_TOKEN"], key=["do_token", "token"], parent="digitalocean",
         header=("Authorization", "Bearer "), api="https://api.digitalocean.com/v2/droplets",
         custom={"cli_flag": ["doctl auth init --access-token {v}", "doctl compute droplet list -t {v}"]}),
    dict(name="hashicorp_vault_token", gen=g_vault,
         contexts=["env", "http_header", "cli_flag", "json", "log"],
         env=["VAULT_TOKEN"], key=["client_token", "vault_token"], parent="vault",
         header=("X-Vault-Token", ""), api="https://vault.internal.example:8200/v1/secret/data/app",
         custom={
             "cli_flag": ["consul-template -vault-addr=https://vault.internal.example:8200 -vault-token={v} -template in.tpl:out.conf",
                          "terraform plan -var vault_token={v}"],
             "json": ['{"request_id": "{uuid}", "auth": {"client_token": "{v}", "accessor": "{hex12}", '
                      '"policies": ["default", "deploy"], "lease_duration": 2764800, "renewable": true}}'],
         }),
    # ---- payments and commerce
    dict(name="stripe_secret_key", gen=g_stripe,
         contexts=["env", "cli_flag", "http_header", "line", "yaml"],
         env=["STRIPE_SECRET_KEY", "STRIPE_API_KEY"], key=["secret_key", "api_key"], parent="stripe",
         header=("Authorization", "Bearer "), api="https://api.stripe.com/v1/charges?limit=3",
         custom={"cli_flag": ["stripe customers list --api-key {v}",
                              "curl https://api.stripe.com/v1/balance -u {v}:"]}),
    dict(name="square_access_token", gen=g_square,
         contexts=["env", "http_header", "json", "yaml", "log"],
         env=["SQUARE_ACCESS_TOKEN"], key=["access_token", "squareAccessToken"], parent="square",
         header=("Authorization", "Bearer "), api="https://connect.squareup.com/v2/locations"),
    dict(name="braintree_access_token", gen=g_braintree,
         contexts=["env", "json", "yaml", "log", "line"],
         env=["BRAINTREE_ACCESS_TOKEN", "PAYPAL_BT_ACCESS_TOKEN"], env_quote="'",
         key=["access_token", "accessToken"], parent="braintree"),
    dict(name="shopify_access_token", gen=g_shopify,
         contexts=["http_header", "env", "json", "cli_flag", "log"],
         env=["SHOPIFY_ACCESS_TOKEN", "SHOPIFY_ADMIN_API_TOKEN"], key=["access_token", "adminApiAccessToken"],
         parent="shopify", header=("X-Shopify-Access-Token", ""),
         api="https://acme-store.myshopify.com/admin/api/2024-07/products.json",
         custom={"cli_flag": ["shopify theme push --store acme-store.myshopify.com --password {v}"]}),
    # ---- messaging and chat
    dict(name="slack_token", gen=g_slack,
         contexts=["env", "http_header", "json", "log", "url_query"],
         env=["SLACK_BOT_TOKEN", "SLACK_TOKEN", "SLACK_APP_TOKEN"], key=["token", "bot_token"], parent="slack",
         header=("Authorization", "Bearer "), api="https://slack.com/api/chat.postMessage",
         url="https://slack.com/api/conversations.list?types=public_channel", param="token"),
    dict(name="slack_webhook_url", gen=g_slack_webhook_token,
         contexts=["env", "yaml", "line", "cli_flag", "log"],
         custom={
             "env": ["SLACK_WEBHOOK_URL={URL}"],
             "yaml": ["receivers:\n  - name: oncall\n    slack_configs:\n      - api_url: {URL}\n        channel: '#alerts'"],
             "line": ["{URL}", "webhook for #deploys:\n{URL}"],
             "cli_flag": ["./notify --webhook-url {URL} --text 'deploy finished'"],
             "log": ["{ts} ERROR [{svc}] POST {URL} failed: 404 no_service"],
         }),
    dict(name="discord_bot_token", gen=g_discord,
         contexts=["env", "http_header", "json", "line", "log"],
         env=["DISCORD_TOKEN", "DISCORD_BOT_TOKEN"], key=["token", "botToken"], parent="discord",
         header=("Authorization", "Bot "), api="https://discord.com/api/v10/users/@me"),
    dict(name="telegram_bot_token", gen=g_telegram,
         contexts=["env", "log", "yaml", "json", "cli_flag"],
         env=["TELEGRAM_BOT_TOKEN", "TG_TOKEN"], key=["bot_token", "token"], parent="telegram",
         custom={
             "log": ["{ts} INFO  httpx HTTP Request: POST https://api.telegram.org/bot{v}/getUpdates \"HTTP/1.1 200 OK\"",
                     "{ts} ERROR [{svc}] GET https://api.telegram.org/bot{v}/sendMessage?chat_id=-100{n6} -> 409 Conflict"],
             "cli_flag": ["python bot.py --bot-token {v} --chat-id -100{n6}"],
         }),
    # ---- e-mail and SMS APIs
    dict(name="sendgrid_api_key", gen=g_sendgrid,
         contexts=["env", "http_header", "yaml", "line", "log"],
         env=["SENDGRID_API_KEY"], key=["api_key", "password"], parent="smtp",
         header=("Authorization", "Bearer "), api="https://api.sendgrid.com/v3/mail/send",
         custom={"yaml": ["smtp:\n  host: smtp.sendgrid.net\n  port: 587\n  username: apikey\n  password: {v}"]}),
    dict(name="mailgun_api_key", gen=g_mailgun,
         contexts=["env", "cli_flag", "yaml", "json", "log"],
         env=["MAILGUN_API_KEY"], key=["api_key", "mailgun_api_key"], parent="mailgun",
         custom={"cli_flag": ["curl -s --user 'api:{v}' https://api.mailgun.net/v3/mg.acme.example/messages "
                              "-F from='noreply@acme.example' -F to=ops@acme.example -F subject=test -F text=hi"]}),
    dict(name="twilio_auth_token", gen=g_twilio_token,
         contexts=["env", "json", "yaml", "cli_flag", "log"],
         env=["TWILIO_AUTH_TOKEN"], key=["auth_token", "authToken"], parent="twilio",
         custom={
             "env": ["TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN={v}"],
             "cli_flag": ["curl -X POST https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json "
                          "--data-urlencode 'To=+15005550006' -u {sid}:{v}"],
             "log": ["{ts} DEBUG [{svc}] POST https://{sid}:{v}@api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json"],
         }),
    dict(name="brevo_api_key", gen=g_brevo,
         contexts=["http_header", "env", "json", "yaml", "line"],
         env=["BREVO_API_KEY", "SENDINBLUE_API_KEY"], key=["api_key", "apiKey"], parent="brevo",
         header=("api-key", ""), api="https://api.brevo.com/v3/smtp/email"),
    # ---- code hosting and CI/CD
    dict(name="github_prefixed_token", gen=g_github_prefixed,
         contexts=["http_header", "env", "log", "cli_flag", "yaml", "line"],
         env=["GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN"], key=["oauth_token", "token"], parent="github.com",
         header=("Authorization", "token "), api="https://api.github.com/user/repos",
         custom={
             "log": ["{ts} [{svc}] git fetch https://x-access-token:{v}@github.com/acme/infra.git refs/heads/main",
                     "{ts} INFO  [{svc}] using GITHUB_TOKEN={v} for release upload"],
             "cli_flag": ["gh-release-tool --repo acme/infra --token {v} --tag v1.4.2",
                          "docker build --build-arg GITHUB_TOKEN={v} -t acme/app ."],
             "yaml": ["github.com:\n    user: acme-bot\n    oauth_token: {v}\n    git_protocol: https"],
         }),
    dict(name="github_fine_grained_pat", gen=g_github_fine_grained,
         contexts=["env", "http_header", "json", "line", "cli_flag"],
         env=["GITHUB_PAT", "GH_TOKEN"], key=["token", "github_token"], parent="github",
         header=("Authorization", "Bearer "), api="https://api.github.com/repos/acme/infra/issues",
         custom={"cli_flag": ["renovate --token {v} --platform github acme/infra",
                              "git clone https://oauth2:{v}@github.com/acme/infra.git"]}),
    dict(name="gitlab_token", gen=g_gitlab,
         contexts=["http_header", "env", "url_query", "cli_flag", "yaml"],
         env=["GITLAB_TOKEN", "CI_JOB_TOKEN_OVERRIDE", "GL_TOKEN"], key=["token", "private_token"], parent="gitlab",
         header=("PRIVATE-TOKEN", ""), api="https://gitlab.com/api/v4/projects?membership=true",
         url="https://gitlab.example.com/api/v4/projects/42/repository/files/README.md/raw?ref=main",
         param="private_token",
         custom={"cli_flag": ["glab auth login --hostname gitlab.example.com --token {v}",
                              "gitlab-runner register --url https://gitlab.example.com --token {v} --executor docker"]}),
    # ---- package registries
    dict(name="npm_access_token", gen=g_npm,
         contexts=["line", "env", "http_header", "yaml", "log"],
         env=["NPM_TOKEN", "NODE_AUTH_TOKEN"], key=["npmAuthToken"], parent="npmScopes",
         header=("Authorization", "Bearer "), api="https://registry.npmjs.org/-/whoami",
         custom={
             "line": ["//registry.npmjs.org/:_authToken={v}"],
             "yaml": ["npmRegistryServer: \"https://registry.npmjs.org\"\nnpmAuthToken: {v}"],
         }),
    dict(name="pypi_api_token", gen=g_pypi,
         contexts=["env", "cli_flag", "line", "yaml", "log"],
         env=["TWINE_PASSWORD", "UV_PUBLISH_TOKEN", "PYPI_TOKEN"], key=["password"], parent="pypi",
         custom={
             "cli_flag": ["twine upload -u __token__ -p {v} dist/*", "uv publish --token {v}"],
             "line": ["[pypi]\n  username = __token__\n  password = {v}"],
             "yaml": ["- name: Publish\n  uses: pypa/gh-action-pypi-publish@release/v1\n  with:\n    password: {v}"],
         }),
    dict(name="dockerhub_pat", gen=g_dockerhub,
         contexts=["cli_flag", "env", "json", "yaml", "log"],
         env=["DOCKERHUB_TOKEN", "DOCKER_PASSWORD"], key=["password", "token"], parent="registry",
         custom={"cli_flag": ["docker login -u acmebot -p {v}", "echo done && docker login --username acmebot --password {v} docker.io"]}),
    dict(name="nuget_api_key", gen=g_nuget,
         contexts=["cli_flag", "http_header", "env", "yaml", "log"],
         env=["NUGET_API_KEY"], key=["api_key", "nuget_api_key"], parent="nuget",
         header=("X-NuGet-ApiKey", ""), api="https://www.nuget.org/api/v2/package",
         custom={"cli_flag": ["dotnet nuget push bin/Release/Acme.Core.2.1.0.nupkg --api-key {v} --source https://api.nuget.org/v3/index.json",
                              "nuget push Acme.Core.2.1.0.nupkg -ApiKey {v}"]}),
    # ---- observability and monitoring
    dict(name="datadog_api_key", gen=g_datadog,
         contexts=["http_header", "env", "yaml", "url_query", "cli_flag"],
         env=["DD_API_KEY", "DATADOG_API_KEY"], key=["api_key"], parent="datadog",
         header=("DD-API-KEY", ""), api="https://api.datadoghq.com/api/v1/validate",
         url="https://http-intake.logs.datadoghq.com/api/v2/logs?ddsource=nginx", param="dd-api-key",
         custom={"cli_flag": ["docker run -d --name dd-agent -e DD_API_KEY={v} -e DD_SITE=datadoghq.eu gcr.io/datadoghq/agent:7"]}),
    dict(name="newrelic_key", gen=g_newrelic,
         contexts=["http_header", "env", "yaml", "cli_flag", "json"],
         env=["NEW_RELIC_API_KEY", "NEW_RELIC_LICENSE_KEY"], key=["license_key", "api_key"], parent="common",
         header=("Api-Key", ""), api="https://api.newrelic.com/graphql",
         gen_ctx={"cli_flag": lambda: "NRAK-" + rs(UP + DIG, 27)},
         custom={"cli_flag": ["newrelic profile add --profile prod --apiKey {v} --region US --accountId {n6}"]}),
    dict(name="sentry_auth_token", gen=g_sentry,
         contexts=["env", "cli_flag", "http_header", "yaml", "log"],
         env=["SENTRY_AUTH_TOKEN"], key=["auth_token", "authToken"], parent="sentry",
         header=("Authorization", "Bearer "), api="https://sentry.io/api/0/organizations/acme/projects/",
         custom={"cli_flag": ["sentry-cli --auth-token {v} releases new 1.4.2",
                              "npx @sentry/wizard -i sourcemaps --auth-token {v}"]}),
    dict(name="grafana_token", gen=g_grafana,
         contexts=["http_header", "env", "yaml", "json", "cli_flag"],
         env=["GRAFANA_TOKEN", "GRAFANA_CLOUD_ACCESS_POLICY_TOKEN", "GRAFANA_SERVICE_ACCOUNT_TOKEN"],
         key=["token", "auth"], parent="grafana",
         header=("Authorization", "Bearer "), api="https://acme.grafana.net/api/dashboards/uid/api-latency",
         custom={"cli_flag": ["grr apply dashboards/ --token {v} --server https://acme.grafana.net"]}),
    dict(name="dynatrace_api_token", gen=g_dynatrace,
         contexts=["http_header", "env", "url_query", "yaml", "cli_flag"],
         env=["DT_API_TOKEN", "DYNATRACE_API_TOKEN"], key=["api_token", "apiToken"], parent="dynatrace",
         header=("Authorization", "Api-Token "), api="https://abc12345.live.dynatrace.com/api/v2/metrics",
         url="https://abc12345.live.dynatrace.com/api/v2/problems?from=now-2h", param="Api-Token",
         custom={"cli_flag": ["./Dynatrace-OneAgent-Linux.sh --set-server=https://abc12345.live.dynatrace.com/communication "
                              "--set-tenant=abc12345 --set-tenant-token={v}"]}),
    # ---- AI / LLM API providers
    dict(name="openai_api_key", gen=g_openai,
         contexts=["env", "http_header", "json", "line", "log"],
         env=["OPENAI_API_KEY"], key=["api_key", "openai_api_key"], parent="openai",
         header=("Authorization", "Bearer "), api="https://api.openai.com/v1/chat/completions"),
    dict(name="anthropic_api_key", gen=g_anthropic,
         contexts=["env", "http_header", "json", "yaml", "log"],
         env=["ANTHROPIC_API_KEY"], key=["api_key", "anthropic_api_key"], parent="anthropic",
         header=("x-api-key", ""), api="https://api.anthropic.com/v1/messages"),
    dict(name="huggingface_token", gen=g_huggingface,
         contexts=["env", "cli_flag", "http_header", "line", "log"],
         env=["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"], key=["hf_token", "token"], parent="huggingface",
         header=("Authorization", "Bearer "), api="https://huggingface.co/api/whoami-v2",
         custom={
             "cli_flag": ["huggingface-cli login --token {v}", "hf upload acme/model ./out --token {v}"],
             "log": ["{ts} INFO  [{svc}] cloning https://acme-bot:{v}@huggingface.co/acme/llm-eval-set"],
         }),
    dict(name="groq_api_key", gen=g_groq,
         contexts=["env", "http_header", "json", "yaml", "line"],
         env=["GROQ_API_KEY"], key=["api_key", "groq_api_key"], parent="groq",
         header=("Authorization", "Bearer "), api="https://api.groq.com/openai/v1/chat/completions"),
    # ---- databases and DSNs (the secret is the password inside the URL)
    dict(name="database_url_password", gen=g_db_password,
         contexts=["env", "yaml", "json", "log", "cli_flag", "line"],
         custom={
             "env": ["DATABASE_URL=postgresql://{user}:{v}@{dbhost}:5432/{db}?sslmode=require",
                     "REDIS_URL=rediss://default:{v}@cache.{hex8}.euw1.cache.amazonaws.com:6379/0",
                     "CELERY_BROKER_URL=amqp://{user}:{v}@rabbitmq.internal:5672/prod"],
             "yaml": ["database:\n  url: mysql://{user}:{v}@{dbhost}:3306/{db}\n  pool_size: 10",
                      "SQLALCHEMY_DATABASE_URI: postgresql+psycopg://{user}:{v}@{dbhost}/{db}"],
             "json": ['{"db": {"dsn": "postgres://{user}:{v}@{dbhost}:5432/{db}"}, "debug": false}'],
             "log": ["{ts} ERROR [{svc}] could not connect to postgresql://{user}:{v}@{dbhost}:5432/{db}: timeout expired",
                     "{ts} WARN  celery.worker.consumer Cannot connect to redis://:{v}@{dbhost}:6379/1: Connection refused."],
             "cli_flag": ["pg_dump --dbname=postgresql://{user}:{v}@{dbhost}:5432/{db} -Fc -f backup.dump",
                          "alembic -x db_url=mysql+pymysql://{user}:{v}@{dbhost}/{db} upgrade head"],
             "line": ["postgresql://{user}:{v}@{dbhost}:5432/{db}", "redis://default:{v}@{dbhost}:6379"],
         }),
    dict(name="mongodb_uri_password", gen=g_mongo_password,
         contexts=["env", "json", "yaml", "cli_flag", "log"],
         custom={
             "env": ["MONGODB_URI=mongodb+srv://{user}:{v}@{cluster}.mongodb.net/{db}?retryWrites=true&w=majority"],
             "json": ['{"mongo": {"uri": "mongodb+srv://{user}:{v}@{cluster}.mongodb.net/?retryWrites=true&w=majority&appName=Cluster0"}}'],
             "yaml": ["spring:\n  data:\n    mongodb:\n      uri: mongodb://{user}:{v}@mongo-0.mongo:27017,mongo-1.mongo:27017/{db}?replicaSet=rs0"],
             "cli_flag": ["mongodump --uri=\"mongodb+srv://{user}:{v}@{cluster}.mongodb.net/{db}\" --out /backups/{date8}",
                          "mongosh \"mongodb+srv://{cluster}.mongodb.net/{db}\" --username {user} --password {v}"],
             "log": ["{ts} ERROR [{svc}] MongoServerSelectionError while connecting to mongodb+srv://{user}:{v}@{cluster}.mongodb.net/{db}"],
         }),
    dict(name="databricks_token", gen=g_databricks,
         contexts=["env", "http_header", "yaml", "json", "cli_flag"],
         env=["DATABRICKS_TOKEN"], key=["token", "databricks_token"], parent="databricks",
         header=("Authorization", "Bearer "), api="https://adb-1234567890123456.7.azuredatabricks.net/api/2.0/clusters/list",
         custom={"cli_flag": ["dbsqlcli --hostname adb-1234567890123456.7.azuredatabricks.net "
                              "--http-path /sql/1.0/warehouses/{hex12} --access-token {v}",
                              "spark-submit --conf spark.databricks.token={v} job.py"]}),
    # ---- auth providers and secret managers
    dict(name="okta_api_token", gen=g_okta,
         contexts=["http_header", "env", "yaml", "json", "log"],
         env=["OKTA_API_TOKEN", "OKTA_CLIENT_TOKEN"], key=["token", "apiToken"], parent="okta",
         header=("Authorization", "SSWS "), api="https://acme.okta.com/api/v1/users?limit=25",
         custom={"yaml": ["okta:\n  client:\n    orgUrl: https://acme.okta.com\n    token: {v}"]}),
    dict(name="doppler_token", gen=g_doppler,
         contexts=["env", "cli_flag", "http_header", "yaml", "line"],
         env=["DOPPLER_TOKEN"], key=["token", "doppler_token"], parent="doppler",
         header=("Authorization", "Bearer "), api="https://api.doppler.com/v3/configs/config/secrets/download?format=json",
         custom={"cli_flag": ["doppler run --token {v} -- ./server-start",
                              "doppler secrets download --no-file --format env --token={v}"]}),
    dict(name="age_secret_key", gen=g_age,
         contexts=["line", "env", "yaml", "json", "log"],
         env=["SOPS_AGE_KEY"], key=["age_key", "identity"], parent="sops",
         custom={"line": ["# created: 2024-11-02T10:14:55+01:00\n# public key: age1{AGEPUB}\n{v}"]}),
    # ---- private keys, JWTs, generic assignments: handled by custom code below
    dict(name="private_key_pem", contexts=["line", "json", "yaml", "env", "log"]),
    dict(name="jwt", gen=g_jwt,
         contexts=["http_header", "url_query", "json", "env", "log", "cli_flag"],
         env=["SUPABASE_SERVICE_ROLE_KEY", "ACCESS_TOKEN", "API_JWT"], key=["access_token", "id_token"], parent="auth",
         header=("Authorization", "Bearer "), api="https://api.acme.example/v2/orders",
         url="https://app.acme.example/callback?state=xyz", param="access_token",
         custom={
             "json": ['{"access_token": "{v}", "token_type": "Bearer", "expires_in": 3600, "scope": "openid profile"}'],
             "cli_flag": ["kubectl --server https://k8s.acme.example:6443 --token {v} get pods -n prod",
                          "grpcurl -H 'authorization: Bearer {v}' api.acme.example:443 list"],
         }),
    dict(name="generic_password_assignment", gen=g_password,
         contexts=["env", "yaml", "json", "cli_flag", "url_query", "log"],
         gen_ctx={"url_query": g_password_urlsafe},
         custom={
             "url_query": ["https://legacy-erp.acme.example/login.php?user=ops&password={v}&lang=en",
                           "{ts} INFO  [{svc}] GET /api/export?username=reporting&password={v}&format=csv -> 200"],
             "env": ["DB_PASSWORD={v}", "POSTGRES_PASSWORD='{v}'", "SMTP_PASSWORD=\"{v}\"", "ADMIN_PASSWORD={v}"],
             "yaml": ["datasource:\n  username: app\n  password: \"{v}\"\n  pool: 5",
                      "redis:\n  host: cache.internal\n  password: '{v}'"],
             "json": ['{"username": "deploy", "password": "{v}", "host": "ftp.acme.example"}',
                      '{"smtp": {"user": "alerts@acme.example", "pass": "{v}", "port": 587}}'],
             "cli_flag": ["mysql -h {dbhost} -u root --password='{v}' {db}",
                          "ldapsearch -x -H ldaps://ldap.acme.example -D cn=admin,dc=acme,dc=example -w '{v}' '(uid=jdoe)'"],
             "log": ["{ts} WARN  [{svc}] login failed for user=deploy password={v} from 10.0.4.21",
                     "{ts} DEBUG [{svc}] connecting with params {'host': 'db.internal', 'user': 'app', 'password': '{v}'}"],
         }),
    dict(name="generic_secret_assignment", gen=g_generic_secret,
         contexts=["env", "yaml", "json", "cli_flag", "log", "http_header"],
         custom={
             "env": ["SECRET_KEY={v}", "JWT_SECRET=\"{v}\"", "WEBHOOK_SIGNING_SECRET={v}", "SESSION_SECRET='{v}'"],
             "yaml": ["oauth:\n  client_id: 3MVG9{hex12}\n  client_secret: \"{v}\"", "app:\n  secret_key_base: {v}"],
             "json": ['{"client_id": "{uuid}", "client_secret": "{v}", "redirect_uri": "https://app.acme.example/cb"}',
                      '{"webhook": {"url": "https://hooks.acme.example/in", "secret": "{v}"}}'],
             "cli_flag": ["./deploy.sh --client-secret '{v}' --env prod", "vendor-sync --api-secret='{v}' --dry-run"],
             "log": ["{ts} INFO  [{svc}] signing webhook payload with secret={v}",
                     "{ts} DEBUG [{svc}] env: APP_SECRET={v} LOG_LEVEL=debug"],
             "http_header": ['curl -X POST https://partner.acme.example/v1/sync -H "X-Api-Secret: {v}"',
                             "POST /api/v1/events HTTP/1.1\nHost: ingest.acme.example\nX-Auth-Token: {v}\nContent-Type: application/json"],
         }),
]


def pem_case(ctx, kind):
    """Private key cases. The secret is the whole block, BEGIN line to END line,
    exactly as it appears in the text (escaped \\n or YAML indentation included)."""
    if ctx == "line":
        block = pem_text(kind)
        text = R.choice(["$ cat ~/.ssh/id_deploy\n%s\n$ ", "%s", "key for the build box:\n%s\n"]) % block
    elif ctx == "json":
        block = pem_text(kind, sep="\\n")  # the trailing \n after the END marker stays outside
        text = ('{\n  "type": "service_account",\n  "project_id": "acme-prod-%s",\n  "private_key_id": "%s",\n'
                '  "private_key": "%s\\n",\n  "client_email": "ci-deployer@acme-prod.iam.gserviceaccount.com",\n'
                '  "client_id": "%s"\n}') % (rs(LO + DIG, 6), rs(HEXL, 40), block, rs(DIG, 21))
    elif ctx == "yaml":
        block = pem_text(kind, indent="    ")
        text = ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: deploy-key\ntype: Opaque\nstringData:\n"
                "  id_rsa: |\n    %s\n") % block
    elif ctx == "env":
        block = pem_text(kind, sep="\\n")
        text = 'JWT_PRIVATE_KEY="%s"' % block
    elif ctx == "log":
        block = pem_text(kind, sep="\\n")
        text = '%s ERROR [%s] failed to load signing key "%s": unsupported key type' % (ts(), R.choice(SVCS), block)
    else:
        raise ValueError(ctx)
    return text, [block]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for f in FORMATS:
        if "gen" in f:
            GEN[f["name"]] = f["gen"]
    TOK["AGEPUB"] = lambda: rs(BECH32, 58)

    secrets = []
    pem_kinds = {"line": "openssh", "json": "pkcs8", "yaml": "rsa", "env": "ec", "log": "pkcs8"}
    for f in FORMATS:
        for ctx in f["contexts"]:
            if f["name"] == "private_key_pem":
                text, secs = pem_case(ctx, pem_kinds[ctx])
            else:
                v = f.get("gen_ctx", {}).get(ctx, f["gen"])()
                extra = []
                custom = f.get("custom", {})
                if ctx in custom:
                    tpl = R.choice(custom[ctx])
                    if "{URL}" in tpl:  # slack webhook: secret is the last path segment
                        tpl = tpl.replace("{URL}", slack_webhook_url("{v}"))
                    text = fill(tpl, v, extra)
                elif ctx == "cli_flag":
                    raise ValueError("cli_flag needs a custom template: " + f["name"])
                else:
                    text = RENDER[ctx](f, v)
                secs = [v] + extra
            for s in secs:
                assert s in text, (f["name"], ctx, s, text)
            secrets.append({"format": f["name"], "context": ctx, "text": text, "secrets": secs})

    with open(os.path.join(here, "secrets.jsonl"), "w") as fh:
        for row in secrets:
            fh.write(json.dumps(row) + "\n")

    looks = lookalikes()
    with open(os.path.join(here, "lookalikes.jsonl"), "w") as fh:
        for row in looks:
            fh.write(json.dumps(row) + "\n")
    print("secrets: %d cases, %d formats; lookalikes: %d texts, %d kinds" % (
        len(secrets), len({r["format"] for r in secrets}), len(looks), len({r["kind"] for r in looks})))


# ---------------------------------------------------------------------------
# lookalikes: must come out unchanged
# ---------------------------------------------------------------------------

def ssh_pub(kind):
    if kind == "ed25519":
        blob = _ssh_string(b"ssh-ed25519") + _ssh_string(rbytes(32))
        return "ssh-ed25519 " + b64(blob)
    if kind == "rsa":
        blob = _ssh_string(b"ssh-rsa") + _ssh_string(b"\x01\x00\x01") + _ssh_string(b"\x00" + rbytes(256))
        return "ssh-rsa " + b64(blob)
    blob = (_ssh_string(b"ecdsa-sha2-nistp256") + _ssh_string(b"nistp256")
            + _ssh_string(b"\x04" + rbytes(64)))
    return "ecdsa-sha2-nistp256 " + b64(blob)


def public_pem():
    der = bytes.fromhex("30820122300d06092a864886f70d01010105000382010f003082010a0282010100") + rbytes(256) + bytes.fromhex("0203010001")
    body = "\n".join(_wrap(b64(der), 64))
    return "-----BEGIN PUBLIC KEY-----\n%s\n-----END PUBLIC KEY-----" % body


def certificate():
    n = R.randint(0x80, 0xf0)  # tbsCertificate length low byte, to vary the prefix a little
    der = bytes([0x30, 0x82, 0x03, n + 0x0c, 0x30, 0x82, 0x02, n]) + bytes.fromhex("a003020102021400") + rbytes(R.randint(740, 800))
    body = "\n".join(_wrap(b64(der), 64))
    return "-----BEGIN CERTIFICATE-----\n%s\n-----END CERTIFICATE-----" % body


def lookalikes():
    h = lambda n: rs(HEXL, n)
    L = []

    def add(kind, *texts):
        for t in texts:
            L.append({"kind": kind, "text": t})

    add("git_commit_hash",
        "Fixed in commit %s; the regression came from %s two weeks earlier." % (h(40), h(7)),
        "git cherry-pick %s && git push origin release/2.3" % h(40),
        "Merge pull request #%d from acme/fix-timeouts (%s)" % (R.randint(100, 9999), h(40)),
        "bisect result: first bad commit is %s\nAuthor: Jane Doe <jane@acme.example>" % h(40))
    add("uuid",
        "request_id=%s status=200 duration_ms=41" % ruuid(),
        '{"order_id": "%s", "status": "shipped"}' % ruuid(),
        "Please reference ticket %s when you reply." % ruuid().upper(),
        "volume pvc-%s bound to claim data-postgres-0" % ruuid())
    add("content_digest",
        "Digest: sha256:%s" % h(64),
        '"config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:%s", "size": 7023}' % h(64),
        "layer sha256:%s already exists" % h(64),
        "ETag: \"sha1-%s\"" % h(40))
    add("npm_integrity",
        '"integrity": "sha512-%s"' % b64(rbytes(64)),
        '    "node_modules/lodash": {\n      "version": "4.17.21",\n      "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz",\n      "integrity": "sha512-%s"\n    }' % b64(rbytes(64)),
        "integrity sha1-%s" % b64(rbytes(20)),
        'resolution: "left-pad@npm:1.3.0"\n  checksum: %s' % h(128))
    add("semantic_version",
        "Upgraded from v2.14.3 to v3.0.0-rc.1+build.5821 without issues.",
        '"version": "10.4.17-beta.3"',
        "requires python>=3.9,<3.13 and numpy==1.26.4",
        "Released 4.2.0-alpha.12+sha.%s on the canary channel." % h(7))
    add("build_id",
        "GITHUB_RUN_ID=%d GITHUB_RUN_NUMBER=%d" % (R.randint(10 ** 9, 10 ** 10), R.randint(100, 9999)),
        "Build #%s.%d finished in 12m 31s" % ("2024%02d%02d" % (R.randint(1, 12), R.randint(1, 28)), R.randint(1, 9)),
        "CodeBuild build id: acme-api-build:%s" % ruuid(),
        "buildkite build %d (commit %s) passed" % (R.randint(1000, 99999), h(12)))
    add("ssh_public_key",
        "%s jane@laptop" % ssh_pub("ed25519"),
        "authorized_keys:\n  - %s deploy@ci" % ssh_pub("rsa"),
        "%s root@bastion" % ssh_pub("ecdsa"),
        "# public key: age1%s" % rs(BECH32, 58))
    add("public_key_or_certificate",
        public_pem(),
        "ca.crt: |\n" + "\n".join("  " + ln for ln in certificate().split("\n")),
        "verify with this public key:\n" + public_pem(),
        certificate())
    add("base64_ordinary_words",
        "label (base64): %s" % b64(b"quarterly revenue report"),
        "X-Trace-Note: %s" % b64(b"retry after maintenance window"),
        '{"encoding": "base64", "data": "%s"}' % b64(b"Hello from the onboarding email template!"),
        "decoded %s -> 'the quick brown fox'" % b64(b"the quick brown fox"))
    add("order_or_tracking_number",
        "Your order #112-%07d-%07d has shipped." % (R.randint(0, 9999999), R.randint(0, 9999999)),
        "UPS tracking: 1Z%s%s" % (rs(UP + DIG, 6), rs(DIG, 10)),
        "Invoice INV-2024-%06d is due on 2024-07-01." % R.randint(0, 999999),
        "RMA number RMA%s, carrier ref %s" % (rs(DIG, 9), rs(DIG, 12)))
    add("hex_colour",
        ".btn-primary { color: #%s; background: #%s; }" % (h(6), h(6)),
        'theme: {"accent": "#%s", "muted": "#%s"}' % (h(6), h(3)),
        "<rect fill=\"#%s\" stroke=\"#%s\"/>" % (h(6).upper(), h(8)),
        "--brand-900: #%s;" % h(6))
    add("public_api_object_id",
        "Created customer cus_%s with price price_%s" % (rs(ALNUM, 14), rs(ALNUM, 24)),
        '{"id": "pi_%s", "object": "payment_intent", "customer": "cus_%s"}' % (rs(ALNUM, 24), rs(ALNUM, 14)),
        "product prod_%s, subscription sub_%s" % (rs(ALNUM, 14), rs(ALNUM, 24)),
        "Slack channel C%s, user U%s" % (rs(UP + DIG, 10), rs(UP + DIG, 10)))
    add("aws_arn",
        "arn:aws:iam::%s:role/github-actions-deploy" % rs(DIG, 12),
        "Resource: arn:aws:s3:::acme-static-assets/*",
        "arn:aws:lambda:eu-west-1:%s:function:resize-images:7" % rs(DIG, 12),
        "subscribe the queue arn:aws:sqs:us-east-1:%s:orders-dlq to the topic" % rs(DIG, 12))
    add("file_checksum",
        "SHA256 (terraform_1.9.5_linux_amd64.zip) = %s" % h(64),
        "%s  node-v20.15.1-linux-x64.tar.xz" % h(64),
        "md5sum: %s  backup-2024-05-01.tar.gz" % h(32),
        "Checksum (SHA-512): %s" % h(128))
    add("docker_image_digest",
        "image: nginx@sha256:%s" % h(64),
        "docker pull ghcr.io/acme/api@sha256:%s" % h(64),
        "FROM python:3.12-slim@sha256:%s" % h(64),
        "Pulled: registry.example.com/team/worker:1.8.2@sha256:%s" % h(64))
    add("asset_hash",
        '<script src="/static/js/main.%s.js" integrity="sha384-%s" crossorigin="anonymous"></script>' % (h(8), b64(rbytes(48))),
        '<link rel="stylesheet" href="/assets/app-%s.css">' % h(20),
        "chunk vendors~main.%s.chunk.js 245 KiB" % h(20),
        "._button_%s_12 { padding: 4px; }" % rs(LO + DIG, 5))
    add("placeholder",
        "export OPENAI_API_KEY=YOUR_API_KEY",
        'curl -H "Authorization: Bearer <token>" https://api.example.com/v1/me',
        "password: xxxxxxxx",
        "STRIPE_SECRET_KEY=sk_live_...\nSLACK_BOT_TOKEN=xoxb-your-token-here")
    add("secret_reference",
        "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        "password: ${DB_PASSWORD}",
        "api_key = os.environ[\"ANTHROPIC_API_KEY\"]",
        "token: \"{{ vault('secret/data/ci').token }}\"")
    add("prose_token_prefix",
        "GitHub classic tokens start with ghp_ while fine-grained ones start with github_pat_.",
        "If the key begins with sk_live_ it is a production Stripe key; rotate it in the dashboard.",
        "Slack bot tokens look like xoxb- followed by numbers and letters.",
        "AWS access key ids begin with AKIA (long-term) or ASIA (temporary).")
    add("trace_or_span_id",
        "traceparent: 00-%s-%s-01" % (h(32), h(16)),
        '{"trace_id": "%s", "span_id": "%s", "level": "info"}' % (h(32), h(16)),
        "X-Amzn-Trace-Id: Root=1-%s-%s" % (h(8), h(24)),
        "x-request-id: %s" % h(32))
    add("database_record_id",
        'db.orders.find({_id: ObjectId("%s")})' % h(24),
        "ULID 01%s created" % rs("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 24),
        "user id %s (snowflake)" % R.randint(10 ** 17, 10 ** 18),
        "GET /api/v1/documents/%s/revisions" % rs(ALNUM, 21))
    add("secret_keyword_non_secret_value",
        "PASSWORD_RESET_TIMEOUT=3600",
        "password_min_length: 12\npassword_require_symbols: true",
        '{"token_type": "Bearer", "expires_in": 3600, "refresh_token_rotation": true}',
        "secret_name: prod/db-credentials  # fetched at startup from Secrets Manager")
    return L


if __name__ == "__main__":
    main()
