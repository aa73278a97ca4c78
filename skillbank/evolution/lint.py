"""Lint every new or edited skill version before it can be stored.

Two severities:

- **reject** — the version is never stored; the reason is recorded (``remember_rejected``) so the
  same edit is not proposed again: hidden literals (task ids, expected answers, benchmark
  labels, verifier details), environment-specific values (ids, numbers of four or more digits,
  e-mail addresses, dates, values that varied between runs), trajectory or skill ids, secrets,
  size caps.
- **quarantine** — the text looks like prompt injection: instructions to ignore or reveal the
  system prompt, to call a tool that neither the skill nor its evidence knows, to send data to a
  URL or an e-mail address, to skip a required check, claims of system or administrator
  authority, announcements that re-define policy, encoded payloads (long base64 or hex, escapes,
  invisible characters), role or delimiter spoofing, or sentences copied from tool outputs. The
  version is stored as ``quarantined`` with the reason in its note and needs explicit human
  promotion (``skillbank candidates promote ID --force``).

:func:`lint_content` is the round's lint (it knows the evidence). :func:`lint_incoming` is the
lint for every other way in (``SkillBank.add_skill`` / ``update_skill`` / ``import_skills``, so
``skillbank skills add|edit`` and ``skillbank import``): it has no evidence to hold a skill to, so it
runs the checks that need none, the injection patterns, through the same
:func:`injection_findings` the round uses. Behind the patterns, every way in also runs the
embedding detector (:mod:`skillbank.evolution.detector`) when it is available: :func:`screen_findings`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from skillbank.evolution.evidence import (
    EMAIL_PATTERN,
    UUID_PATTERN,
    HiddenLiterals,
    Run,
    literal_key,
    literal_tokens,
)
from skillbank.lessons import example_text, lesson_tools
from skillbank.models import SkillContent

REJECT = "reject"
QUARANTINE = "quarantine"


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}"


@dataclass
class LintResult:
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def rejected(self) -> bool:
        return any(f.severity == REJECT for f in self.findings)

    @property
    def quarantined(self) -> bool:
        return not self.rejected and any(f.severity == QUARANTINE for f in self.findings)

    @property
    def reason(self) -> str:
        return "; ".join(str(f) for f in self.findings)


@dataclass
class LintContext:
    """What a skill is checked against: the evidence it came from and the caps."""

    hidden: HiddenLiterals = field(default_factory=HiddenLiterals)
    # Instance values from the requests (``evidence.request_words``): checked against what the
    # skill learned from runs, not against the fixed sentences its lessons render to.
    request_words: frozenset[str] = frozenset()
    known_tools: set[str] = field(default_factory=set)
    tool_outputs: Sequence[str] = ()
    scrubber: Callable[[str], str] | None = None
    max_body_chars: int = 4000
    max_description_chars: int = 600
    detector: Any = None  # the embedding detector: None = the shared one, False = patterns only

    @classmethod
    def for_runs(cls, runs: Iterable[Run], hidden: HiddenLiterals, **kw) -> "LintContext":
        runs = list(runs)
        tools = {c.tool for r in runs for c in r.calls} | {h.tool for r in runs for h in r.limits if h.tool}
        # What a distiller could have copied from: the tool outputs of (up to 500 of) the runs.
        sample = runs[-_MAX_OUTPUT_RUNS:]
        outputs = [c.result for r in sample for c in r.calls if c.result]
        outputs += [c.error for r in sample for c in r.calls if c.error]
        return cls(hidden=hidden, known_tools=tools, tool_outputs=outputs, **kw)


# -- patterns --------------------------------------------------------------------------------------

_INJECTION = [
    (re.compile(r"\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}\b(previous|prior|above|earlier|"
                r"preceding|all|any|other|system|original|developer)\b[^.\n]{0,30}\b(instructions?|rules|"
                r"prompts?|messages?|guidelines|directions|constraints|polic(?:y|ies))", re.I),
     "tells the model to ignore its instructions"),
    (re.compile(r"\b(reveal|print|show|repeat|leak|output|disclose|dump|expose|display)\b[^.\n]{0,30}"
                r"\b(system|hidden|developer|initial|secret)\s+(prompt|message|instructions?)", re.I),
     "asks to reveal the system prompt"),
    (re.compile(r"\byou are now\b|\bnew instructions\s*:|\bdeveloper mode\b|\bjailbreak|\bdo anything now\b"
                r"|\bpretend (?:to be|you are)\b|\bact as (?:an? )?(?:admin|root|system|developer)", re.I),
     "tries to change the model's role"),
    (re.compile(r"</?\s*(?:system|assistant|user|skills?|instructions?)\s*>|\[/?INST\]|<\|[a-z_]+\|>"
                r"|^\s*(?:system|assistant)\s*:", re.I | re.M),
     "spoofs a role or a prompt delimiter"),
    (re.compile(r"\b(send|post|upload|forward|e-?mail|exfiltrate|transmit|submit|leak|share)\b[^.\n]{0,80}"
                r"(?:https?://|www\.|\b[\w.+-]+@[\w-]+\.[\w.-]+)", re.I),
     "tells the model to send data to an address"),
    (re.compile(r"https?://\S+|\bwww\.[\w-]+\.\w+", re.I), "contains a URL"),
    (re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40,}={0,2}(?![A-Za-z0-9+/])"), "contains a long base64-like payload"),
    (re.compile(r"\b(?:0x)?[0-9a-fA-F]{32,}\b"), "contains a long hex payload"),
    (re.compile(r"(?:\\x[0-9a-fA-F]{2}){4,}|(?:\\u[0-9a-fA-F]{4}){3,}|(?:%[0-9a-fA-F]{2}){6,}"),
     "contains escaped or encoded characters"),
    (re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\u00ad]"), "contains invisible characters"),
    # Added for issue 15 (claimed authority, announced policy, skipped checks, and wordings the
    # patterns above missed): one regex per finding, its alternatives joined.
    *[(re.compile("|".join(f"(?:{rx})" for rx in alternatives), re.I | re.M), why) for why, alternatives in (
        ("tells the model to ignore its instructions", (
            r"\b(?:ignore|disregard|forget)\s+(?:everything|anything|whatever|all(?:\s+of)?(?:\s+that)?)\s+"
            r"(?:you\s+(?:were|have\s+been|are)\s+(?:told|given|instructed)|above|before|else)",
            r"\b(?:ignore|disregard|forget)\s+(?:the|all|any|your)\s+(?:[\w-]+\s+)?(?:instructions?|rules|prompts?"
            r"|guidelines|directions|constraints|polic(?:y|ies))\s+(?:above|before|so\s+far|you\s+(?:were|have\s+been)"
            r"\s+given)",
            r"\b(?:supersedes?|replaces?|takes?\s+precedence\s+over)\s+(?:all\s+|any\s+)?(?:the\s+|your\s+)?"
            r"(?:previous|prior|earlier|existing|other|original|system)\s+(?:instructions?|rules|prompts?|guidelines"
            r"|polic(?:y|ies)|directions)")),
        ("tells the model to send data to an address", (
            r"\b(?:send|post|upload|forward|e-?mail|transmit|copy|share|leak|exfiltrate)\b[^.\n]{0,60}\b"
            r"(?:conversation|transcript|chat\s+(?:history|log)|system\s+prompt|credentials?|passwords?|api\s+keys?"
            r"|access\s+tokens?|card\s+numbers?)\b[^.\n]{0,80}?(?:https?://|www\.|[\w.+-]+@[\w-]+\.|\b(?:[\w-]+\.)+"
            r"(?:com|net|org|io|co|ru|cn|xyz|info|biz|app|dev)\b|\b\d{1,3}(?:\.\d{1,3}){3}\b|\bwebhook|\bendpoint"
            r"|\b(?:external|outside|remote|third[- ]party)\b|\bthe\s+address\b)",)),
        # Negated forms ("do not skip the check", "never refund without checking") are the
        # opposite lesson, and the ones the project's own skills teach: they must pass.
        ("tells the model to skip a required check", (
            r"(?<!not )(?<!never )(?<!n't )\b(?:skip|bypass|omit|waive|disable|circumvent)\s+(?:the\s+|any\s+|all\s+"
            r"|every\s+|this\s+|that\s+|its\s+|their\s+)?(?:[\w-]+\s+){0,2}?(?:checks?|verifications?|validations?"
            r"|confirmations?|approvals?|authentication|eligibility|reviews?|safeguards?)\b",
            r"(?:^|[.!?;]\s+)(?:(?!\b(?:never|not|no|cannot)\b|n't\b)[^.!?;\n]){0,100}?\bwithout\s+(?:first\s+)?"
            r"(?:any\s+|the\s+|a\s+|an\s+)?(?:required\s+|usual\s+|prior\s+|proper\s+)?(?:check(?:ing|s)?\b"
            r"|verif|validat|confirm|approv|authori[sz]|authenticat|proof\b|receipts?\b)",
            r"\bno\s+need\s+(?:to|for)\s+(?:\w+\s+){0,2}?(?:check|verif|validat|confirm|authenticat|approv)",
            r"\b(?:do\s+not|don't|does\s+not|doesn't|never)\s+(?:need|have)\s+to\s+"
            r"(?:check|verify|validate|confirm|authenticate)\b",
            r"\b(?:do\s+not|don't|never)\s+(?:run|call|use|perform|do)\s+(?:the\s+|any\s+)?`?"
            r"(?>[\w-]*(?:check|verif|validat|confirm|eligib)[\w-]*)`?(?!\s+(?:again|twice|more))",
            r"\bno\s+longer\s+(?:need|needs|needed|require|requires|required|necessary|mandatory|appl(?:y|ies))\b")),
        ("claims system or administrator authority", (
            r"\b(?:system|admin(?:istrator)?|developer|security|compliance|operator|management|moderator|root)\s+"
            r"(?:notice|override|alert|announcement|directive|mandate|command|order|update|instruction|message)s?\s*:",
            r"\b(?:system|admin(?:istrator)?|developer|security)\s+(?:override|directive|mandate)\b",
            r"\[\s*(?:system|admin(?:istrator)?|developer|operator|root|sudo|official)\s*\]",
            r"\b(?:as|i\s+am|i'm|we\s+are|this\s+is)\s+(?:the|your|an?)\s+(?:system\s+)?"
            r"(?:admin(?:istrator)?|developer|operator)s?\b",
            r"\b(?:message|instruction|order|directive|notice)s?\s+from\s+(?:the\s+|your\s+)?(?:system\s+)?"
            r"(?:admin(?:istrator)?|developer|operator|security\s+team|it\s+department|management)s?\b",
            r"\b(?:by\s+order\s+of|on\s+behalf\s+of|authori[sz]ed\s+by|signed\s+by)\s+(?:the\s+|your\s+)?"
            r"(?:system\s+)?(?:admin(?:istrator)?|developer|operator|security\s+team|management)s?\b",
            r"\b(?:this\s+is|these\s+are)\s+(?:an?\s+|the\s+)?(?:official|authori[sz]ed|mandatory|priority)\s+"
            r"(?:instruction|order|directive|notice|message|update|request)s?\b",
            r"\bi\s+(?:hereby\s+)?(?:authori[sz]e|permit|allow|order|instruct)\s+you\b")),
        ("announces or re-defines a policy", (
            r"\b(?:new|updated|revised|changed|temporary|special|emergency)\s+(?:[\w-]+\s+)?(?:polic(?:y|ies)"
            r"|rules?|guidelines?)\s*(?::|\u2014|-\s)",
            r"\b(?:polic(?:y|ies)|rules?|guidelines?)\s+(?:update|change|override|exception|revision|notice)s?\s*:",
            r"\b(?:polic(?:y|ies)|rules?)\s+(?:has|have)\s+(?:now\s+)?(?:been\s+)?(?:changed|updated|revised"
            r"|replaced|suspended|lifted|waived|removed|relaxed)\b",
            r"\b(?:under|per|according\s+to|following)\s+(?:the\s+|our\s+)?(?:new|updated|revised|latest|changed)\s+"
            r"(?:[\w-]+\s+)?polic(?:y|ies)\b",
            r"\b(?:effective|starting|beginning|as\s+of)\s+(?:immediately|today|now)\b",
            r"\bpolic(?:y|ies)\s+(?:now|no\s+longer)\b")),
    )],
]
_TOOL_USE = re.compile(r"\b(?:call|calls|calling|use|using|invoke|invoking|run|running|execute|"
                       r"executing|trigger)\s+(?:the\s+|a\s+)?`([A-Za-z_][\w.\-]*)`", re.I)

_TRAJ_ID = re.compile(r"\b(?:tr|sk)_[0-9a-f]{16}\b")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b")
_LONG_NUMBER = re.compile(r"(?<![\w.])#?[A-Za-z]*[-_]?\d{4,}[\w-]*")
_PHONE = re.compile(r"\+?\d{1,3}[ .-]?\(?\d{3}\)?[ .-]?\d{3}[ .-]?\d{4}\b")
_REDACTED = re.compile(r"\[REDACTED:[\w.-]+\]")
_PLACEHOLDER = re.compile(r"<[a-z][a-z0-9_]*>")
_MAX_OUTPUT_RUNS = 500


def _ngrams(text: str, n_max: int = 4) -> set[str]:
    tokens = literal_tokens(text)
    out: set[str] = set()
    for n in range(1, n_max + 1):
        for i in range(len(tokens) - n + 1):
            out.add(" ".join(tokens[i:i + n]))
    return out


def _shingles(text: str, n: int = 8) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def _learned_text(content: SkillContent, previous: SkillContent | None) -> str:
    """The part of a skill that came from runs: its name and description, and what its new
    lessons say in their own words (argument shapes, free guidance), not the sentences the
    renderer wraps them in. A skill without structured lessons is all its own words."""
    if not content.lessons:
        return f"{content.name}\n{content.description}\n{content.body}"
    old = {x.key for x in previous.all_lessons} if previous is not None else set()
    parts = [content.name.replace("-", " "), content.description]
    for lesson in content.lessons:
        if lesson.key in old:
            continue
        parts.append(lesson.text or "")
        parts += [value for step in lesson.steps for value in step.args.values()]
    return "\n".join(parts)


def injection_findings(text: str) -> list[Finding]:
    """A quarantine finding for each kind of prompt injection ``text`` holds (the first match of
    each): the check every way into the bank shares."""
    found: dict[str, Finding] = {}
    for pattern, why in _INJECTION:
        if why not in found and (m := pattern.search(text)):
            found[why] = Finding("injection", QUARANTINE, f"{why}: {m.group(0).strip()[:60]!r}")
    return list(found.values())


def _shown_text(content: SkillContent) -> str:
    """Everything of ``content`` a model can be shown: its name, description and body, and its
    lessons' worked examples (rendered inside its block when the injector shows examples)."""
    examples = [example_text(e) for lesson in content.lessons for e in lesson.examples]
    return "\n".join([content.name, content.description, content.body, *examples])


def _added_text(content: SkillContent, previous: SkillContent | None) -> str:
    """The lines of ``content`` that ``previous`` (the version it edits) did not have."""
    text = _shown_text(content)
    if previous is None:
        return text
    old_lines = set(_shown_text(previous).splitlines())
    return "\n".join(line for line in text.splitlines() if line not in old_lines)


def detector_findings(text: str, detector: Any = None) -> list[Finding]:
    """A quarantine finding when the embedding detector (:mod:`skillbank.evolution.detector`)
    scores any line or sentence of ``text`` as an injection; none when it is off. ``detector``:
    None for the shared one, False for none, or an :class:`InjectionDetector`."""
    if detector is False:
        return []
    if detector is None:
        from skillbank.evolution.detector import active_detector

        detector = active_detector()
    if detector is None:
        return []
    flagged = detector.flagged(text)
    if not flagged:
        return []
    worst = max(flagged, key=lambda s: s.probability)
    return [Finding("injection-detector", QUARANTINE,
                    f"reads like an instruction to the model (p={worst.probability:.2f}): {worst.text[:60]!r}")]


def screen_findings(text: str, detector: Any = None) -> list[Finding]:
    """Both injection layers: the patterns first, then the detector on what they let through."""
    found = injection_findings(text)
    return found if found else detector_findings(text, detector)


def lint_incoming(content: SkillContent, *, previous: SkillContent | None = None,
                  detector: Any = None) -> LintResult:
    """The lint for a skill that enters from outside an evolution round (added, edited, imported).

    Such a skill has no evidence to hold it to, so only the injection screens apply (the patterns,
    then the embedding detector when it runs; ``detector=False`` for the patterns alone); lines it
    shares with ``previous`` (the version it replaces) were already let in and are not re-checked.
    """
    return LintResult(screen_findings(_added_text(content, previous), detector))


def lint_content(content: SkillContent, ctx: LintContext | None = None,
                 *, previous: SkillContent | None = None) -> LintResult:
    """Check ``content``; ``previous`` (the version it edits) exempts text a person already had."""
    ctx = ctx or LintContext()
    result = LintResult()
    add = result.findings.append
    # Text that was already in the version being edited is not the distiller's doing: only
    # lines it adds are held to the evidence-based rules.
    new_text = _added_text(content, previous)

    # Size caps.
    if len(content.body) > ctx.max_body_chars:
        add(Finding("size", REJECT, f"body has {len(content.body)} characters; the cap is {ctx.max_body_chars}"))
    if len(content.description) > ctx.max_description_chars:
        add(Finding("size", REJECT, f"description has {len(content.description)} characters; "
                                    f"the cap is {ctx.max_description_chars}"))

    # Secrets.
    if ctx.scrubber is not None and ctx.scrubber(new_text) != new_text:
        add(Finding("secret", REJECT, "contains a secret (the scrubber would redact it)"))
    if _REDACTED.search(new_text):
        add(Finding("secret", REJECT, "contains a redacted secret placeholder copied from evidence"))

    # Prompt injection.
    result.findings.extend(screen_findings(new_text, ctx.detector))
    allowed = ctx.known_tools | set(previous.tools if previous is not None else ())
    named = {m.group(1) for m in _TOOL_USE.finditer(new_text)} | set(content.tools)
    old_lessons = {x.key for x in previous.all_lessons} if previous is not None else set()
    named |= lesson_tools(x for x in content.lessons if x.key not in old_lessons)
    unrelated = sorted(t for t in named if t not in allowed)
    if unrelated and allowed:
        add(Finding("unrelated-tool", QUARANTINE,
                    "instructs calling " + ", ".join(f"`{t}`" for t in unrelated)
                    + ", which is neither a tool of this skill nor one seen in its evidence"))
    if ctx.tool_outputs:
        skill_shingles = _shingles(new_text)
        if skill_shingles:
            for output in ctx.tool_outputs:
                common = skill_shingles & _shingles(output)
                if common:
                    add(Finding("tool-output", QUARANTINE,
                                "copies text from a tool output: " + repr(" ".join(min(common)))))
                    break

    # Hidden literals and de-hardcoding (<placeholders> and known tool names aside).
    plain = _PLACEHOLDER.sub(" ", new_text)
    for tool in sorted(allowed | set(content.tools), key=len, reverse=True):
        plain = plain.replace(f"`{tool}`", " ")
    grams = _ngrams(plain, 4)
    hits: dict[str, str] = {}
    for gram in grams:
        why = ctx.hidden.values.get(gram)
        if why is not None:
            hits.setdefault(why, ctx.hidden.originals.get(gram, gram))
    if ctx.hidden.long:
        flat = literal_key(plain)
        for key in ctx.hidden.long:
            if key in flat:
                hits.setdefault(ctx.hidden.values[key], ctx.hidden.originals.get(key, key))
    if ctx.request_words:
        learned = _PLACEHOLDER.sub(" ", _learned_text(content, previous))
        for word in sorted(set(literal_tokens(learned)) & ctx.request_words):
            hits.setdefault("environment-specific value from a request", word)
            break
    for why, value in sorted(hits.items()):
        add(Finding("hardcoded" if "environment" in why else "hidden", REJECT,
                    f"contains {'an' if why[0] in 'aeiou' else 'a'} {why}: {value!r}"))
    for pattern, why in ((_TRAJ_ID, "a trajectory or skill id"), (UUID_PATTERN, "an id"),
                         (EMAIL_PATTERN, "an e-mail address"), (_DATE, "a date"), (_PHONE, "a phone number"),
                         (_LONG_NUMBER, "an id or number of four or more digits")):
        m = pattern.search(plain)
        if m:
            add(Finding("hardcoded", REJECT, f"contains {why} ({m.group(0)!r}); use a <placeholder>"))
    return result
