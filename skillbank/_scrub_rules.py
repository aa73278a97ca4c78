"""The scrubber's own secret rule catalogue: each built-in pattern, in the order it runs.

Only the table lives here; :mod:`skillbank._scrub` runs it. It is a module and not a data file
because the patterns are composed from shared fragments (token boundaries, assignment values, the
ids an unlabelled secret must sit next to), each explained beside its code, and because possessive
quantifiers are used only where the Python supports them: expanded into JSON, the ``password`` and
``secret`` patterns alone would be several kilobytes of unreviewable regex.

Design rules
------------
* **Precision over recall on ordinary text.** Each pattern keys on a vendor prefix or a
  label (``password=``, ``Authorization: Bearer``, ``AccountKey=``...), requires the right length
  and character classes, and checks token boundaries on both sides, so words like ``task-force``,
  ``sk-learn``, uuids, git SHAs, "password reset link" or "Bearer of bad news" survive.
* **Placeholders are no values.** What people write in docs and templates instead of a secret
  (``xxxxxxxx``, ``********``, ``YOUR_API_KEY``, ``changeme``, ``<token>``, ``${VAR}``) is left as it
  is after any label (see ``_PLACEHOLDER_VALUE``); a key name followed by whitespace only counts
  when the name is an identifier (``vault_token``, ``squareAccessToken``) or a flag, never the
  bare words "token" or "secret" in prose.
* **Unlabelled secrets need their partner id.** A bare AWS secret access key (40 base64
  characters) or Twilio auth token / API key secret (32 characters) has no shape of its own, so it
  is caught only on the same or the next line as the id it belongs to (``AKIA...``/``ASIA...``,
  ``AC...``, ``SK...``, or that id's placeholder), and must look random (both letter cases and a
  digit), so git SHAs, md5s and uuids next to an id survive. Those branches are tried only in a
  short window around each such id (see :data:`_NEAR`).
* **Linear time.** Patterns are precompiled, no pattern has nested quantifiers over overlapping
  classes, unbounded runs only start at token boundaries and look-aheads are bounded. Patterns
  that begin with a case-sensitive literal (``sk-``, ``AIza``) let the regex engine skip ahead;
  label patterns (``password=``, ``Bearer``) carry anchors and are tried only where their label
  occurs in the lower-cased text. So do vendor rules with several prefixes (``gl*-``,
  ``key-``/``pubkey-``): the regex engine scans fast only for one literal prefix. Rules with no
  prefix at all (a Telegram bot token, an Entra client secret) are tried only next to the fixed
  part of their shape (see :data:`_NEAR`).
* **Vendor formats, not samples.** A vendor rule is written from the format the vendor
  publishes (prefix, length, alphabet), named in a comment beside it, never from the shape of a
  held-out test token; the held-out sets (tests/data/heldout*) measure the catalogue, and their
  look-alikes must come through untouched.
"""

from __future__ import annotations

import re
import types
from collections.abc import Mapping
from typing import Any

__all__ = ["DEFAULT_PATTERNS"]

_T = r"[A-Za-z0-9_-]"  # characters of a token (base64url); used for token boundaries
_AN = r"[A-Za-z0-9]"


def _tok(prefix: str, width: int, body: str, *, left: str = _T, right: str | None = _T) -> str:
    """``prefix`` + ``body`` as a whole token.

    The prefix comes first so the regex engine can scan for it quickly; the left boundary is a
    fixed-width look-behind over the prefix just matched (``width`` characters) and one more. An
    escaped newline or tab right before the token (``\\n``: a multi-line text inside a JSON string)
    is a boundary too, though its ``n`` is a token character.
    """
    out = rf"{prefix}(?:(?<=\\[nrt][\s\S]{{{width}}})|(?<!{left}[\s\S]{{{width}}})){body}"
    if right:
        out += rf"(?!{right})"
    return out


def _toks(prefixes: tuple[str, ...], body: str, **kw: Any) -> str:
    """``_tok`` for each literal prefix (each needs its own fixed-width look-behind), as alternatives."""
    return "(?:" + "|".join(_tok(re.escape(p), len(p), body, **kw) for p in prefixes) + ")"


# Possessive quantifiers (Python >= 3.11) stop runs of generic values from backtracking when the
# character after them rules the match out; older Pythons fall back to plain (bounded) runs.
try:
    re.compile("a{1,2}+")
    _POS = "+"
except re.error:  # pragma: no cover - Python < 3.11
    _POS = ""

# "contains a digit" / "contains an upper and a lower case letter", written with disjoint classes
# and bounded so the look-aheads are linear.
_HAS_DIGIT_AN = r"(?=[A-Za-z]{0,512}[0-9])"
_HAS_ALPHA_AN = r"(?=[0-9]{0,512}[A-Za-z])"

# Values of generic assignments. Quoted values end at the quote (``\\"`` too, for JSON inside
# JSON). Password values need >= 8 non-space characters and may hold spaces when quoted
# (passphrases); other secret values hold no spaces and must look random: a digit, or two
# capitals and a small letter. Bare values are maximal runs and must not look like code or prose (see
# ``_NOT_BARE``). Runs are bounded so failed attempts stay cheap.
_BARE = r"""[^\s"'`,;&<>()\[\]{}\\]"""
_BARE_NO = r"""[^\s"'`,;&<>()\[\]{}\\%s]"""  # _BARE minus the given characters
_IDENT = r"[A-Za-z_][A-Za-z0-9_]{0,31}"
_NOT_QUOTED = r"(?!\[REDACTED:|\$\{|\{\{|<|%\()"
_NOT_BARE = (
    # env and template references: $X, ${X}, {{ x }}, %(x)s
    r"(?!\[REDACTED:|\$|\{\{|%\("
    # attribute paths: self.api_key, settings.SECRET_KEY, Token.Comment.Single
    r"|(?:" + _IDENT + r"\.)+" + _IDENT + r"(?!" + _BARE + r")"
    # UPPER_SNAKE constants: OPENAI_API_KEY
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?!" + _BARE + r")"
    # identifiers passed on: f(password=pw), password=password, proxy_password = proxy_password
    r"|[A-Za-z_]+[,)]"
    r"|[a-z_]*(?:pass|pwd|secret|token|key|cred|auth)[a-z_]*(?!" + _BARE + r")"
    # snake_case names: password = index_url_password_info
    r"|[a-z]+(?:_[a-z]+)+(?!" + _BARE + r")"
    # annotations: token: TokenOpt = None, password: _PasswordType | None, password: SecretStr
    # (a space before "=": a base64 value ends in "=" padding, then a space, in log lines)
    r"|[A-Za-z_][A-Za-z0-9_]*(?:[ \t]*\|[ \t]|[ \t]+=[ \t])"
    r"|(?:[A-Z][a-z0-9]*)+(?:Str|String|Bytes|Type|Field|Opt|Optional)(?!" + _BARE + r")"
    # prose after a label: "api_key: Explicitly-provided API key", ":param password: Password for"
    r"|[A-Za-z]+(?:-[A-Za-z]+)*[ \t]+[A-Za-z]{2,})"
)


# Values a person writes in docs and config templates instead of a secret: a run of mask
# characters (``xxxxxxxx``, ``********``, ``xxxx-xxxx``), ``YOUR_API_KEY`` / ``your password here``,
# ``changeme``, ``placeholder``, ``redacted``, ``dummy``, ``example`` (words only: a digit makes it
# a possible real value). Matched against the whole value (see ``_value``), so ``xxxxxxxx9Kf2``
# or ``changeme2024!`` are still values.
_PLACEHOLDER_VALUE = (
    r"(?:[xX*#._-]{8,1024}"
    r"|(?i:your)[ _-]?[A-Za-z _-]{0,64}"
    r"|(?i:change[_-]?(?:me|it)|replace[_-]?me|placeholder|redacted|dummy|example|sample)[A-Za-z_-]{0,32})"
)


def _random_like(cls_minus: str) -> str:
    """Look-ahead: the run (class given as a template minus ``%s``) has a digit, or two capitals
    and a small letter (so ``Whitespace`` or ``Punctuation`` do not count)."""
    return (
        r"(?:(?=" + cls_minus % "0-9" + r"{0,1024}[0-9])"
        r"|(?=(?:" + cls_minus % "A-Z" + r"{0,1024}[A-Z]){2})(?=" + cls_minus % "a-z" + r"{0,1024}[a-z]))"
    )


def _no_label_word(cls_minus: str) -> str:
    """Look-ahead: the run (class given as a template minus ``%s``) holds no word of a label
    (``"secret": "V1SecretProjection"``, ``token_key = "RpcGroupManagementToken"``): names in
    code, practically never random keys. A run with 8 digits or more is no name, whatever words
    its vendor prefix holds (``xkeysib-<64 hex>-...``, ``access_token$production$...``)."""
    return (r"(?:(?=(?:" + cls_minus % "0-9" + r"{0,1024}[0-9]){8})|(?!" + cls_minus % ""
            + r"{0,1024}?(?i:secret|token|key|auth|cred|pass)))")


def _value(*, password: bool, tag: str = "") -> str:
    """The value alternatives; their groups are named ``secret_<tag>dq|sq|bare``."""
    alts = []
    for q, name in (('"', f"secret_{tag}dq"), ("'", f"secret_{tag}sq")):
        esc = "\\\\?" if q == '"' else ""  # JSON-escaped double quotes
        if password:
            body = r"(?=(?:[ \t]*[^\s" + q + r"\\]){8})(?P<" + name + r">[^" + q + r"\\\n]{8,1024}" + _POS + ")"
        else:
            body = (
                _random_like(r"[^\s" + q + r"\\%s]")
                + _no_label_word(r"[^\s" + q + r"\\%s]")
                + r"(?P<" + name + r">[^\s" + q + r"\\]{8,1024}" + _POS + ")"
            )
        alts.append(esc + q + _NOT_QUOTED + r"(?!" + _PLACEHOLDER_VALUE + esc + q + r")" + body + esc + q)
    bare = (_NOT_BARE + r"(?!" + _PLACEHOLDER_VALUE + r"(?!" + _BARE + r"))"
            + ("" if password else _random_like(_BARE_NO) + _no_label_word(_BARE_NO)))
    alts.append(bare + r"(?P<secret_" + tag + r"bare>" + _BARE + r"{8,1024}" + _POS + r")(?!" + _BARE + r"|[(\[])")
    return "(?:" + "|".join(alts) + ")"


_ASSIGN = r"""\\?["']?[ \t]*(?:=>|:=|[:=])[ \t]*"""
_SUFFIX = r"(?:[_.-]?(?:key|token|secret|value|base|str|string))?"
_PASSWORD_LABEL = r"(?i:pass(?:word|wd|phrase)" + _SUFFIX + r")"
_SECRET_LABEL = (
    r"(?i:(?:secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?key"
    r"|session[_-]?key|account[_-]?key|credentials?)" + _SUFFIX + r")"
)


# Before a value that follows a key name and whitespace only: it must hold a letter (so counts
# are no values) and be no timestamp, version or path with a directory (``2024-05-01T12:00:00Z``,
# ``v1.2.3-beta.4``, ``~/.ssh/id_rsa``).
_NAMED_VALUE = (
    r"""(?=\\?["']?[0-9.:_+/-]{0,1024}[A-Za-z])"""
    r"""(?!\\?["']?(?:[0-9]{4}-[0-9]{2}-[0-9]{2}|[vV]?[0-9]{1,4}\.[0-9]{1,4}\.|[~.]{0,2}/[a-z0-9._-]{1,64}/))"""
)


def _assignment(label: str, *, password: bool) -> str:
    # ``--password VALUE``: a flag name followed by prose is common, so the value must look random
    flag = r"(?<![A-Za-z0-9_-])--(?:[A-Za-z0-9]+-){0,4}" + label + r"[ \t]+" + _value(password=False, tag="f")
    # A key name, whitespace, the value (log lines: ``using vault_token <v>``,
    # ``aws_secret_access_key <v>``; PowerShell / nuget flags: ``-ApiKey <v>``): the label must be
    # part of an identifier -- glued to a word before it (``squareAccessToken``, ``APP_SECRET``),
    # holding ``_`` / ``-`` itself (``api_key``, ``secret_key``) -- or a single-dash flag, so the
    # words "token" or "secret" in prose do not count; as for flags, the value must look random.
    named = (
        r"(?:(?<=[A-Za-z0-9_.])|(?<=[ \t]-)|(?<![A-Za-z0-9_.-])(?=[A-Za-z]{0,24}[_-]))"
        + label + r"(?![A-Za-z0-9_])[ \t]+" + _NAMED_VALUE + _value(password=False, tag="n")
    )
    return r"(?:" + flag + r"|" + label + _ASSIGN + _value(password=password) + r"|" + named + r")"


# ``ldapsearch ... -w <password>``: ``-w`` is the bind password of the OpenLDAP client tools (their
# man pages), and only of them: ``grep -w``, ``wc -w``, ``curl -w`` or ``ping -w`` take no
# password, so the flag counts only on the command line of one of those tools.
_LDAP_W = (
    r"ldap(?:search|modify|add|delete|passwd|compare|modrdn|whoami|exop)(?![A-Za-z0-9_-])"
    r"[^\n|;&]{0,256}?[ \t]-w[ \t]+" + _value(password=True, tag="w")
)


# Bearer tokens: >= 16 characters with a digit, or with both letter cases.
_BEARER_CHARS = r"[A-Za-z0-9._~+/-]"
_BEARER_TOKEN = (
    r"(?:(?=[A-Za-z._~+/-]{0,1024}[0-9])|(?=[a-z0-9._~+/-]{0,1024}[A-Z])(?=[A-Z0-9._~+/-]{0,1024}[a-z]))"
    + _BEARER_CHARS
    + r"{16,}=*"
)

# Context-anchored secrets: a value with no prefix of its own, caught only next to the id it
# belongs to. The id may already be a placeholder (its own rule runs first). Boundaries accept an
# escaped newline/tab before the value (JSON inside JSON). Gaps are bounded (48 characters of the
# same line), so each id costs a constant amount of work.
_ESC_LEFT = r"(?<=\\[nrt])"
# the end of a line: closing quotes or separators, then a newline or the end of the text
_EOL = r"""[ \t\r,;|"']{0,8}(?:\n|$)"""
_LEFT_AN = r"(?:" + _ESC_LEFT + r"|(?<![A-Za-z0-9]))"
_AWS_ID = r"(?:" + _LEFT_AN + r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])|\[REDACTED:aws_access_key_id\])"
# 40 base64 characters as a whole token, with both letter cases and a digit, '/' or '+' (so git
# SHA-1s, words and lower-case paths do not count); not followed by more base64 or by '.ext'.
_AWS_SECRET = (
    r"(?:" + _ESC_LEFT + r"|(?<![A-Za-z0-9/+_.-]))"
    r"(?=[a-z0-9/+]{0,39}[A-Z])(?=[A-Z0-9/+]{0,39}[a-z])(?=[A-Za-z]{0,39}[0-9/+])"
    r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_-]|\.[A-Za-z0-9])"
)
# Twilio: only punctuation between the SID and the value (an md5 elsewhere on the line is no token)
_TW_SEP = r"""(?:[ \t\r"',:;|=()]|\\[nrt"'])"""
_TW_GAP = _TW_SEP + r"{0,8}(?:\n" + _TW_SEP + r"{0,8})?"  # at most one line break
_TW_ACCOUNT_SID = _LEFT_AN + r"AC[0-9a-f]{32}(?![A-Za-z0-9])"
_TW_KEY_SID = r"(?:" + _LEFT_AN + r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])|\[REDACTED:twilio_key\])"
_TW_AUTH_TOKEN = (
    r"(?:" + _ESC_LEFT + r"|(?<![A-Za-z0-9_-]))"
    r"(?=[a-f]{0,31}[0-9])(?=[0-9]{0,31}[a-f])[0-9a-f]{32}(?![A-Za-z0-9_-])"
)
# Both letter cases (so an md5 next to the SID is no secret), but no digit quota: 1 in 280 real
# 32-character secrets has no digit.
_TW_KEY_SECRET = (
    r"(?:" + _ESC_LEFT + r"|(?<![A-Za-z0-9_-]))"
    r"(?=[a-z0-9]{0,31}[A-Z])(?=[A-Z0-9]{0,31}[a-z])[A-Za-z0-9]{32}(?![A-Za-z0-9_-])"
)

# GitLab's token prefixes (GitLab docs, "Token prefixes"): personal/project/group access, OAuth
# application secret, deploy, runner authentication (two), CI/CD job, pipeline trigger, feed,
# incoming mail, agent, SCIM and feature-flag client tokens, and legacy runner registration tokens.
# glpat- was the rule's only prefix before issue 32.
_GITLAB = ("glpat-", "gloas-", "gldt-", "glrt-", "glrtr-", "glcbt-", "glptt-", "glft-", "glimt-",
           "glagent-", "glsoat-", "glffct-", "GR1348941")


_GITLAB_ROUTABLE = r"(?:\.(?:[0-9a-z]{2}\.)?[0-9a-z]{9})?"


# Look-ahead for vendor tokens whose alphabet has ``_``, ``-`` or ``.``: a capital or a digit
# somewhere (bounded), so snake_case and kebab-case names after a prefix (``tfp_layers_dense_...``,
# ``glrt-your-runner-token-here``) survive; a random token of 20 such characters lacks both
# with a probability of about 1e-7.
_NOT_WORDS = r"(?=[a-z_.=-]{0,256}[A-Z0-9])"


def _lower(prefixes: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(p.lower() for p in prefixes)


# (kind, regex, anchors). Most patterns begin with a case-sensitive literal (``sk-``, ``AIza``),
# which the regex engine finds as fast as a substring search. The others (case-insensitive
# labels, character-class prefixes) carry ``anchors``: lower-case strings one of which every match
# *starts* with. Those patterns are tried only where an anchor occurs in the lower-cased text,
# instead of at every position.
_SPECS: list[tuple[str, str, tuple[str, ...] | None]] = [
    (
        "private_key",
        r"-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----"
        # the body cannot contain "-----", so the run stops at the next delimiter
        r"(?:(?:[^-]|-(?!----)){0,12000}-----END[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:(?:\s|\\[rn])+[A-Za-z0-9+/=]{16,})*)",  # truncated block: header + base64 lines
        None,
    ),
    (
        "jwt",
        _tok("eyJ", 3, r"[A-Za-z0-9_-]{7,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+){0,2}", right=None),
        None,
    ),
    ("anthropic_key", _tok("sk-ant-", 7, r"[A-Za-z0-9_-]{20,}"), None),
    (
        "openai_key",
        r"sk-(?<!" + _T + r"[\s\S]{3})(?:"
        r"(?:proj|svcacct|admin|None)-(?=[A-Za-z_-]{0,512}[0-9])(?=[a-z0-9_-]{0,512}[A-Z])"
        r"(?=[A-Z0-9_-]{0,512}[a-z])[A-Za-z0-9_-]{40,}"
        r"|" + _HAS_DIGIT_AN + _HAS_ALPHA_AN + r"[A-Za-z0-9]{20,}"
        r")",
        None,
    ),
    ("google_api_key", _tok("AIza", 4, r"[A-Za-z0-9_-]{35}"), None),
    ("google_oauth_secret", _tok("GOCSPX-", 7, r"[A-Za-z0-9_-]{24,40}"), None),
    ("google_oauth_token", _tok(r"ya29\.", 5, r"[A-Za-z0-9_-]{20,}"), None),
    (
        "github_token",
        r"(?:" + _tok("gh[pousr]_", 4, r"[A-Za-z0-9]{30,}", right=None)
        + r"|" + _tok("github_pat_", 11, r"[A-Za-z0-9_]{30,}", right=None) + r")(?![A-Za-z0-9_])",
        None,
    ),
    # GitLab: every token prefix GitLab documents (see _GITLAB) + 20 or more base64url characters;
    # names after the prefixes added for issue 32 (``glrt-your-token-here``) are no tokens.
    # Routable tokens (GitLab's "Routable tokens" design and routable_token.rb) end in
    # ``.<version>.<payload length><crc32>`` (``.01.`` + 2 + 7 base36 characters), earlier in
    # ``.<payload length><crc32>``; that suffix is part of the token.
    (
        "gitlab_token",
        _toks(_GITLAB[:1], r"[A-Za-z0-9_-]{20,}" + _GITLAB_ROUTABLE)
        + "|" + _toks(_GITLAB[1:], _NOT_WORDS + r"[A-Za-z0-9_-]{20,}" + _GITLAB_ROUTABLE),
        _lower(_GITLAB),
    ),
    ("slack_token", _tok(r"(?:xox[abposr]-|xapp-)", 5, r"(?=[A-Za-z-]{0,512}[0-9])[A-Za-z0-9-]{10,}"), None),
    (
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}",
        None,
    ),
    (
        "discord_webhook",
        r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/[0-9]{5,}/[A-Za-z0-9_-]{20,}",
        None,
    ),
    ("stripe_key", _tok(r"[spr]k_(?:live|test)_", 8, r"[A-Za-z0-9]{16,}"), ("sk_", "pk_", "rk_")),
    (
        "aws_access_key_id",
        _tok(r"A(?:KIA|SIA|BIA|CCA)", 4, r"[A-Z0-9]{16}", left=_AN, right=_AN),
        None,
    ),
    (
        "aws_secret_key",
        r"(?i:aws[_-]?secret(?:[_-]?access)?[_-]?key|secret[_-]?access[_-]?key)"
        + _ASSIGN
        + r"""\\?["']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"""
        # unlabelled, next to its access key id: "AKIA... <secret>", CSV rows, or on adjacent lines
        # when the id ends one line and the secret ends the other
        + r"|" + _AWS_ID + r"[^\n]{0,48}?(?P<secret_after_id>" + _AWS_SECRET + r")"
        + r"|" + _AWS_ID + _EOL + r"[^\n]{0,48}?(?P<secret_after_id_nl>" + _AWS_SECRET + r")(?=" + _EOL + r")"
        + r"|(?P<secret_before_id>" + _AWS_SECRET + r")(?=[^\n]{0,48}?" + _AWS_ID + r")"
        + r"|(?P<secret_before_id_nl>" + _AWS_SECRET + r")(?=" + _EOL + r"[^\n]{0,48}?" + _AWS_ID + _EOL + r")",
        ("aws", "secret"),
    ),
    (
        "huggingface_token",
        # Exactly 34 letters and digits, in any mix of cases: the length is the shape. Identifiers
        # (hf_hub_download, hf_AutoModelForCausalLM) break the run with "_" or are another length;
        # a capital-letter quota missed real tokens with few capitals.
        _tok("hf_", 3, r"[A-Za-z0-9]{34}", right=r"[A-Za-z0-9_]"),
        None,
    ),
    ("twilio_key", _tok("SK", 2, r"[0-9a-fA-F]{32}", left=_AN, right=_AN), None),
    (
        "twilio_secret",
        # an auth token right after or before an account SID: Client("AC...", "<token>"), -u AC...:<token>
        _TW_ACCOUNT_SID + _TW_GAP + r"(?P<secret_after_sid>" + _TW_AUTH_TOKEN + r")"
        + r"|(?P<secret_before_sid>" + _TW_AUTH_TOKEN + r")(?=" + _TW_GAP + _TW_ACCOUNT_SID + r")"
        # an API key secret right after its key SID: Client("SK...", "<secret>", "AC...")
        + r"|" + _TW_KEY_SID + _TW_GAP + r"(?P<secret_after_key>" + _TW_KEY_SECRET + r")",
        (),  # only where an SID occurs, see _NEAR
    ),
    ("sendgrid_key", _tok(r"SG\.", 3, r"[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}"), None),
    ("npm_token", _tok("npm_", 4, r"[A-Za-z0-9]{36}", right=r"[A-Za-z0-9_]"), None),
    # The prefix and the length are the shape of these keys; a "has a digit" rule missed the
    # keys that happen to have none (1 in 280 of 32-character Tavily keys).
    ("groq_key", _tok("gsk_", 4, r"[A-Za-z0-9]{40,}"), None),
    ("replicate_token", _tok("r8_", 3, r"[A-Za-z0-9]{30,}"), None),
    ("perplexity_key", _tok("pplx-", 5, r"[A-Za-z0-9]{40,}"), None),
    ("xai_key", _tok("xai-", 4, r"[A-Za-z0-9]{40,}"), None),
    ("langsmith_key", _tok("lsv2_(?:pt|sk)_", 8, r"[0-9a-f]{32}_[0-9a-f]{8,12}"), None),
    ("tavily_key", _tok("tvly-", 5, r"(?:dev-|prod-)?[A-Za-z0-9]{20,}"), None),
    # -- Vendor tokens added for issue 32 (held-out misses), each written from the format the
    # vendor publishes (prefix, length, alphabet); the comment names it. Each is a whole token
    # (``_tok`` boundaries), so a prefix in prose ("tokens look like whsec_...") survives. Those with
    # several prefixes carry them as anchors (see the module docstring).
    #
    # Mailgun private / public API key (legacy format in Mailgun's docs: ``key-`` or ``pubkey-`` +
    # 32 lower-case letters and digits). "key-" also starts ordinary words, so the run must hold a
    # digit and a letter (random keys do; "key-value-store" is no run of 32).
    (
        "mailgun_key",
        _toks(("key-", "pubkey-"), r"(?=[a-z]{0,31}[0-9])(?=[0-9]{0,31}[a-z])[a-z0-9]{32}"),
        ("key-", "pubkey-"),
    ),
    # age secret key (C2SP age spec: Bech32, upper case, HRP ``AGE-SECRET-KEY-``, separator ``1``,
    # 32 bytes of key -> 52 data characters + 6 checksum characters of the Bech32 alphabet).
    ("age_secret_key", _tok("AGE-SECRET-KEY-1", 16, r"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"), None),
    # Webhook signing secret: Stripe's ``whsec_`` (Stripe docs) and the Standard Webhooks spec
    # (Svix and others): ``whsec_`` + the base64 of 24-64 random bytes.
    ("webhook_secret", _tok("whsec_", 6, r"[A-Za-z0-9+/]{24,}={0,2}", right=r"[A-Za-z0-9+/=_-]"), None),
    # Shopify (Shopify's token prefixes): Admin API / custom app / private app access tokens
    # ``shpat_`` / ``shpca_`` / ``shppa_`` and app shared secrets ``shpss_`` + 32 hex digits.
    ("shopify_token", _tok(r"shp(?:at|ca|pa|ss)_", 6, r"[a-fA-F0-9]{32}"), None),
    # DigitalOcean (DigitalOcean's token prefixes, 2021): personal access ``dop_v1_``, OAuth access
    # ``doo_v1_`` and refresh ``dor_v1_`` tokens + 64 hex digits.
    ("digitalocean_token", _tok(r"do[opr]_v1_", 7, r"[a-f0-9]{64}"), None),
    # Grafana (Grafana docs): service account tokens ``glsa_`` + 32 letters/digits + ``_`` + an
    # 8-hex-digit checksum; Grafana Cloud access policy tokens ``glc_`` + base64.
    (
        "grafana_token",
        _tok("glsa_", 5, r"[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}")
        + "|" + _tok("glc_", 4, r"[A-Za-z0-9+/]{32,}={0,2}", right=r"[A-Za-z0-9+/=_-]"),
        ("glsa_", "glc_"),
    ),
    # Telegram bot token (Telegram Bot API docs, "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11"): the
    # bot's numeric id, ``:``, 35 base64url characters; also in the documented URL form
    # ``https://api.telegram.org/bot<token>/METHOD``. The secret half must have both letter cases
    # (so "1700000000:abcdef..." style log fields survive). No prefix to scan for, so it is tried
    # only in the 16 characters before a ``:`` that has a digit before it and 35 token characters
    # after it (see _NEAR).
    (
        "telegram_bot_token",
        r"[0-9](?:(?<=/bot[0-9])|(?<![A-Za-z0-9_:-][0-9]))[0-9]{4,15}:"
        r"(?=[a-z0-9_-]{0,34}[A-Z])(?=[A-Z0-9_-]{0,34}[a-z])[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])",
        (),
    ),
    # PyPI API token (PyPI help, "API tokens"): ``pypi-`` + a base64url macaroon; its length varies
    # with its caveats, so the catalogue's floor for prefixed tokens (20) and a random look (a
    # digit and both letter cases) keep names like "pypi-simple-index" out.
    (
        "pypi_token",
        _tok("pypi-", 5, r"(?=[A-Za-z_-]{0,1024}[0-9])(?=[a-z0-9_-]{0,1024}[A-Z])(?=[A-Z0-9_-]{0,1024}[a-z])"
             r"[A-Za-z0-9_-]{20,}"),
        None,
    ),
    # New Relic (New Relic docs, "API keys"): user keys ``NRAK-``, insert and query keys ``NRII-`` /
    # ``NRIQ-``, browser keys ``NRJS-``, REST API keys ``NRRA-``; 19 (browser) to 42 (REST)
    # characters after the prefix.
    ("newrelic_key", _tok(r"NR(?:AK|II|IQ|JS|RA)-", 5, r"[A-Za-z0-9_-]{19,42}"), None),
    # Fly.io (flyctl's token formats): legacy personal access tokens ``fo1_`` + 43 base64url
    # characters; macaroon tokens ``fm1a_`` / ``fm1r_`` / ``fm2_`` + base64, several joined by
    # commas after the ``FlyV1`` scheme word (the scheme word stays, the macaroons go as one).
    (
        "flyio_token",
        _tok("fo1_", 4, r"[A-Za-z0-9_-]{43}")
        + "|" + _toks(("fm1a_", "fm1r_", "fm2_"),
                      r"[A-Za-z0-9+/]{40,}={0,3}(?:,fm(?:1[ar]|2)_[A-Za-z0-9+/]{40,}={0,3})*",
                      right=r"[A-Za-z0-9+/=_-]"),
        ("fo1_", "fm1a_", "fm1r_", "fm2_"),
    ),
    # Sentry (Sentry docs, auth tokens): user tokens ``sntryu_`` + 64 hex digits; organization
    # tokens ``sntrys_`` + base64 JSON (``eyJ``...) + ``_`` + the secret.
    (
        "sentry_token",
        _tok("sntryu_", 7, r"[a-f0-9]{64}")
        + "|" + _tok("sntrys_", 7, r"eyJ[A-Za-z0-9+/=_-]{30,}", right=r"[A-Za-z0-9+/=_-]"),
        ("sntryu_", "sntrys_"),
    ),
    # Figma personal access tokens (Figma docs: they start with ``figd_``) + base64url.
    ("figma_token", _tok("figd_", 5, _NOT_WORDS + r"[A-Za-z0-9_-]{30,}"), None),
    # Airtable personal access token (Airtable docs): the token id ``pat`` + 14 letters/digits, a
    # dot, and the 64-hex-digit secret.
    ("airtable_token", _tok("pat", 3, r"[A-Za-z0-9]{14}\.[a-f0-9]{64}", left=_AN, right=_AN), None),
    # PlanetScale (PlanetScale docs): database passwords ``pscale_pw_``, service tokens
    # ``pscale_tkn_``, OAuth tokens ``pscale_oauth_`` + 32-64 base64url characters.
    ("planetscale_token", _toks(("pscale_pw_", "pscale_tkn_", "pscale_oauth_"), _NOT_WORDS + r"[A-Za-z0-9_=.-]{32,64}"),
     ("pscale_",)),
    # OpenRouter API keys (OpenRouter docs: ``sk-or-v1-`` + the key); the openai_key rule above
    # does not take them (a hyphen follows "sk-or").
    ("openrouter_key", _tok("sk-or-v1-", 9, r"[A-Za-z0-9]{32,}"), None),
    # Shippo API tokens (Shippo docs): ``shippo_live_`` / ``shippo_test_`` + 40 hex digits.
    ("shippo_token", _tok(r"shippo_(?:live|test)_", 12, r"[a-fA-F0-9]{40}"), None),
    # Contentful Content Management personal access tokens (Contentful docs): ``CFPAT-`` + 43
    # base64url characters.
    ("contentful_token", _tok("CFPAT-", 6, r"[A-Za-z0-9_-]{43}"), None),
    # Alibaba Cloud AccessKey ID (Alibaba Cloud docs): ``LTAI`` + 12-20 letters and digits. An id,
    # redacted for the same reason as the AWS access key id.
    ("alibaba_access_key_id", _tok("LTAI", 4, r"[A-Za-z0-9]{12,20}", left=_AN, right=_AN), None),
    # Microsoft Entra (Azure AD) application client secrets (Microsoft's identifiable secret format,
    # 2021 on): 3 characters, a digit, ``Q~``, 31-34 characters of ``[A-Za-z0-9_~.-]``. Tried only
    # just before each ``Q~`` (see _NEAR); a final "." is read as the end of a sentence.
    (
        "azure_client_secret",
        r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{30,33}[A-Za-z0-9_~-](?![A-Za-z0-9_~-])",
        (),
    ),
    # JFrog Artifactory (JFrog docs): API keys ``AKCp`` + 69 letters and digits (73 in all);
    # reference tokens, the base64 of ``reftkn:01:...`` (``cmVmdGtuOjAxOj``...).
    (
        "jfrog_token",
        _tok("AKCp", 4, r"[A-Za-z0-9]{69}", left=_AN, right=_AN)
        + "|" + _tok("cmVmdGtuOjAxOj", 14, r"[A-Za-z0-9+/]{40,}={0,2}",
                     left=r"[A-Za-z0-9+/]", right=r"[A-Za-z0-9+/=]"),
        ("akcp", "cmvmdgtuojaxoj"),
    ),
    # RubyGems.org API keys (RubyGems guides): ``rubygems_`` + 48 hex digits.
    ("rubygems_key", _tok("rubygems_", 9, r"[a-f0-9]{48}"), None),
    # Docker Hub (Docker docs): personal access tokens ``dckr_pat_``, organization access tokens
    # ``dckr_oat_`` + base64url.
    ("dockerhub_token", _tok(r"dckr_(?:pat|oat)_", 9, _NOT_WORDS + r"[A-Za-z0-9_-]{24,}"), None),
    # Buildkite API access tokens (Buildkite docs): ``bkua_`` + 40 hex digits.
    ("buildkite_token", _tok("bkua_", 5, r"[a-f0-9]{40}"), None),
    # ReadMe API keys (ReadMe docs): ``rdme_`` + letters and digits (70 in keys seen).
    ("readme_key", _tok("rdme_", 5, r"[A-Za-z0-9]{40,}"), None),
    # Typeform personal access tokens (Typeform docs): ``tfp_`` + base64url and ``.=``. (``tfp`` is
    # also TensorFlow Probability's alias: ``tfp_layers_...`` names have no capital or digit.)
    ("typeform_token", _tok("tfp_", 4, _NOT_WORDS + r"[A-Za-z0-9_.=-]{40,}"), None),
    # Adafruit IO keys (Adafruit IO docs): ``aio_`` + 28 letters and digits.
    ("adafruit_io_key", _tok("aio_", 4, r"[A-Za-z0-9]{28}"), None),
    # Mapbox (Mapbox docs, access tokens): secret ``sk.`` and temporary ``tk.`` tokens, a base64url
    # JSON payload (``eyJ``...), a dot and the signature. Public ``pk.`` tokens are public.
    (
        "mapbox_token",
        r"(?<![A-Za-z0-9_.-])[st]k\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_-])",
        ("sk.eyj", "tk.eyj"),
    ),
    # Tailscale (Tailscale docs, keys): ``tskey-`` + the key type (``auth``, ``api``, ``client``,
    # ``webhook``, ``scim``), a key id and the secret, joined by hyphens; must hold a digit, so
    # documentation placeholders ("tskey-auth-xxxxx") survive.
    ("tailscale_key", _tok("tskey-", 6, r"(?=[A-Za-z-]{0,256}[0-9])[A-Za-z0-9-]{20,}"), None),
    # Atlassian API tokens (the 2023 format, 192 characters): ``ATATT`` + base64url characters and
    # ``=`` (the checksum is joined by one); an ``=`` would end a Bearer token or a query value
    # early, so this runs before those rules.
    ("atlassian_token", _tok("ATATT", 5, r"[A-Za-z0-9_=-]{20,}", left=_AN, right=r"[A-Za-z0-9_=-]"), None),
    # Linear (Linear docs): personal API keys ``lin_api_`` + 40 letters and digits; OAuth access
    # tokens ``lin_oauth_`` + 64 hex digits.
    ("linear_key", _toks(("lin_api_", "lin_oauth_"), r"[A-Za-z0-9]{32,}"), ("lin_api_", "lin_oauth_")),
    # -- Vendor tokens added after the third held-out set (issue 32), same rules as above.
    #
    # Doppler (Doppler docs, "Auth Token Formats", which give the regexes): service tokens
    # ``dp.st.`` + an optional config slug (2-35 of ``[a-z0-9_-]``) and ``.``; CLI, personal, service
    # account, service account identity, SCIM and audit tokens ``dp.ct.`` / ``dp.pt.`` / ``dp.sa.`` /
    # ``dp.said.`` / ``dp.scim.`` / ``dp.audit.``; then 40-44 letters and digits.
    (
        "doppler_token",
        _tok(r"dp\.st\.", 6, r"(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44}")
        + "|" + _toks(("dp.ct.", "dp.pt.", "dp.sa.", "dp.said.", "dp.scim.", "dp.audit."), r"[A-Za-z0-9]{40,44}"),
        ("dp.",),
    ),
    # Dynatrace (Dynatrace docs, "Token format"): a prefix naming the token type (``dt0c01`` API
    # tokens, ``dt0s01``...: ``dt0`` + a letter + 2 digits), a dot, the 24-character public
    # portion, a dot and the 64-character secret portion (upper-case letters and digits).
    ("dynatrace_token", _tok(r"dt0[a-z][0-9]{2}\.", 7, r"[A-Z0-9]{24}\.[A-Z0-9]{64}"), None),
    # HashiCorp Vault (Vault docs, "Tokens", token prefixes since 1.10): service ``hvs.``, batch
    # ``hvb.`` and recovery ``hvr.`` tokens + base64url; snake_case names after the prefix survive.
    ("vault_token", _tok(r"hv[sbr]\.", 4, _NOT_WORDS + r"[A-Za-z0-9_-]{24,}"), None),
    # Braintree access tokens (the layout Braintree's SDKs parse, CredentialsParser):
    # ``access_token$<environment>$<merchant id>$<secret>``; the environments the SDKs know,
    # merchant ids of lower-case letters and digits (16 in Braintree's docs), a random secret.
    (
        "braintree_token",
        _tok(r"access_token\$", 13, r"(?:production|sandbox|development|qa)\$[a-z0-9]{8,32}\$"
             r"(?=[A-Za-z]{0,64}[0-9])[A-Za-z0-9]{16,64}", right=r"[A-Za-z0-9_$-]"),
        None,
    ),
    (
        "account_key",
        r"(?i:(?:account|sharedaccess)key)[ \t]*=[ \t]*(?P<secret>[A-Za-z0-9+/]{16,}={0,2})"
        r"|[?&;]sig=(?P<secret_sig>[A-Za-z0-9%+/=]{20,})",
        ("accountkey", "sharedaccesskey", "?sig=", "&sig=", ";sig="),
    ),
    (
        "url_password",
        r""":\\?/\\?/[^\s:@/?#\[\]"'<>\\]{0,256}:"""
        r"(?!\[REDACTED:|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?@)"
        r"""(?P<secret>[^\s@/?#\[\]"'<>\\]{1,256})@""",
        None,
    ),
    (
        "bearer_token",
        r"(?i:bearer)(?<![A-Za-z0-9][\s\S]{6})[ \t]+(?P<secret>" + _BEARER_TOKEN + r")",
        ("bearer",),
    ),
    (
        "basic_auth",
        r"(?i:authorization)" + _ASSIGN + r"""\\?["']?(?i:basic)[ \t]+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})""",
        ("authorization",),
    ),
    (
        # Authorization headers beyond Bearer and Basic (which run first): ``Token <t>``,
        # ``ApiKey <t>``, ``SSWS <t>`` or a bare credential; it must look random. A scheme word
        # before a placeholder (``Api-Token [REDACTED:...]``, a vendor rule took the token) stays.
        "auth_header",
        r"(?i:authorization)" + _ASSIGN + r"""\\?["']?(?:[A-Za-z][A-Za-z0-9_-]{1,24}[ \t]+)?"""
        + r"(?!\[REDACTED:)" + _random_like(r"[^\s\"'`,;\\%s]")
        + r"""(?P<secret>[^\s"'`,;\\]{8,1024}""" + _POS + r""")(?![^\s"'`,;\\]|[ \t]+\[REDACTED:)""",
        ("authorization",),
    ),
    ("password", _assignment(_PASSWORD_LABEL, password=True) + "|" + _LDAP_W, ("pass", "--", "ldap")),
    (
        "secret",
        _assignment(_SECRET_LABEL, password=False),
        ("secret", "token", "api", "access", "private", "auth", "session", "account", "credential", "--"),
    ),
]

_FLAGS = re.ASCII  # ASCII-only case folding keeps the lower-case anchors exact

#: Ordered kinds -> compiled regexes of the built-in detectors (read-only).
DEFAULT_PATTERNS: Mapping[str, re.Pattern[str]] = types.MappingProxyType(
    {kind: re.compile(rx, _FLAGS) for kind, rx, _ in _SPECS}
)
_DEFAULT_ANCHORS: dict[str, tuple[str, ...] | None] = {kind: anchors for kind, _, anchors in _SPECS}
#: A whole value that is a placeholder, not a secret (``scrub_obj`` reads bare values with it).
_PLACEHOLDER_VALUE_RE = re.compile(_PLACEHOLDER_VALUE, _FLAGS)

#: Rules whose matches may also start away from their anchors, next to an id: kind -> (a regex
#: that finds every id the rule's context branches accept, and how far before the start of such an
#: id a match may begin). The rule is tried at its anchors and at every position in those windows.
_NEAR: dict[str, tuple[re.Pattern[str], int]] = {
    # secret (40) + same-line gap (48), or secret + line end (8 + 1) + gap (48)
    "aws_secret_key": (re.compile(r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}|\[REDACTED:aws_access_key_id\]", _FLAGS), 100),
    # token (32) + gap (2 x 8 separators of up to 2 characters + a newline)
    "twilio_secret": (re.compile(r"AC[0-9a-f]{32}|SK[0-9a-fA-F]{32}|\[REDACTED:twilio_key\]", _FLAGS), 70),
    # the bot id (5-16 digits) ends at the ':' the 35-character secret follows
    "telegram_bot_token": (re.compile(r":(?<=[0-9]:)[A-Za-z0-9_-]{35}", _FLAGS), 16),
    # the client secret's marker sits 4 characters into it ("abc1Q~...")
    "azure_client_secret": (re.compile(r"Q~", _FLAGS), 4),
}
