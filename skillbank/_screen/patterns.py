"""The screen every skill entering the bank from outside a round passes (``SkillBank.add_skill``
/ ``update_skill`` / ``import_skills``, so ``skillbank skills add|edit`` and ``skillbank
import``): text that looks like prompt injection quarantines the skill.

Two layers: the patterns below (instructions to ignore or reveal the system prompt, to send
data to an address, to skip a required check, claims of authority, announced policies, encoded
payloads, role or delimiter spoofing), the fast first layer, and behind them, on what they let
through, the detector ``SKILLBANK_INJECTION_DETECTOR`` turns on (the embedding detector, the LLM
detector or both; :mod:`skillbank._screen.second_layer`): :func:`screen_findings`. The evolution
round's lint (:mod:`skillbank.evolution._lint`) runs the same two layers over what a distiller
proposes, with the checks that need evidence besides.
"""

from __future__ import annotations

import re
from typing import Any

from skillbank.lessons import example_text
from skillbank.models import SkillContent
from skillbank._screen.findings import QUARANTINE, REJECT, Finding, LintResult
from skillbank._screen.second_layer import active_detector

__all__ = ["REJECT", "QUARANTINE", "Finding", "LintResult", "injection_findings", "detector_findings",
           "screen_findings", "lint_incoming", "added_text"]

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


def added_text(content: SkillContent, previous: SkillContent | None) -> str:
    """The lines of ``content`` that ``previous`` (the version it edits) did not have."""
    text = _shown_text(content)
    if previous is None:
        return text
    old_lines = set(_shown_text(previous).splitlines())
    return "\n".join(line for line in text.splitlines() if line not in old_lines)


def detector_findings(text: str, detector: Any = None) -> list[Finding]:
    """The second layer's findings on ``text`` (:mod:`skillbank._screen.second_layer`): the
    embedding detector, the LLM detector or both. ``detector``: None for the one
    ``SKILLBANK_INJECTION_DETECTOR`` names (none by default), False for none, or a detector (an
    object with ``findings(text)``)."""
    if detector is False:
        return []
    if detector is None:
        detector = active_detector()
    return detector.findings(text) if detector is not None else []


def screen_findings(text: str, detector: Any = None) -> list[Finding]:
    """Both injection layers: the patterns first, then the detector on what they let through."""
    found = injection_findings(text)
    return found if found else detector_findings(text, detector)


def lint_incoming(content: SkillContent, *, previous: SkillContent | None = None,
                  detector: Any = None) -> LintResult:
    """The lint for a skill that enters from outside an evolution round (added, edited, imported).

    Such a skill has no evidence to hold it to, so only the injection screens apply (the patterns,
    then the detector behind them when one is on; ``detector=False`` for the patterns alone); lines it
    shares with ``previous`` (the version it replaces) were already let in and are not re-checked.
    """
    return LintResult(screen_findings(added_text(content, previous), detector))
