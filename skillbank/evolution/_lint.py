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
  invisible characters), role or delimiter spoofing, or sentences copied from tool outputs (the
  finding names the tool and the trajectory the copied text sits in, issue 32). The
  version is stored as ``quarantined`` with the reason in its note and needs explicit human
  promotion (``skillbank candidates promote ID --force``).

:func:`lint_content` is the round's lint (it knows the evidence). :func:`lint_incoming` is the
lint for every other way in (``SkillBank.add_skill`` / ``update_skill`` / ``import_skills``, so
``skillbank skills add|edit`` and ``skillbank import``): it has no evidence to hold a skill to, so it
runs the checks that need none, the injection patterns, through the same
:func:`injection_findings` the round uses. Behind the patterns, every way in also runs the
detector ``SKILLBANK_INJECTION_DETECTOR`` turns on (embedding, LLM or both;
:mod:`skillbank._screen.second_layer`): :func:`screen_findings`.
Those checks live below the bank, in :mod:`skillbank._screen` (the bank's default screen); this
module imports them from there, so both speak of one patterns list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from skillbank.evolution._evidence import HiddenLiterals, Run, literal_key, literal_tokens
from skillbank.evolution._templates import EMAIL_PATTERN, UUID_PATTERN
from skillbank.lessons import LessonKind, lesson_tools, sentence
from skillbank.models import SkillContent
from skillbank._screen.patterns import (
    QUARANTINE,
    REJECT,
    Finding,
    LintResult,
    added_text,
    screen_findings,
)


@dataclass
class LintContext:
    """What a skill is checked against: the evidence it came from and the caps."""

    hidden: HiddenLiterals = field(default_factory=HiddenLiterals)
    # Instance values from the requests (``evidence.request_words``): checked against what the
    # skill learned from runs, not against the fixed sentences its lessons render to.
    request_words: frozenset[str] = frozenset()
    known_tools: set[str] = field(default_factory=set)
    # What a distiller could have copied from: each a tool output's text, or (text, where it came
    # from) so a finding can tell a reviewer which tool in which run the copied text sits in.
    tool_outputs: Sequence[str | tuple[str, str]] = ()
    scrubber: Callable[[str], str] | None = None
    max_body_chars: int = 4000
    max_description_chars: int = 600
    detector: Any = None  # behind the patterns: None = the one the environment names, False = none

    @classmethod
    def for_runs(cls, runs: Iterable[Run], hidden: HiddenLiterals, **kw) -> "LintContext":
        runs = list(runs)
        # A tool the agent was offered is related even if no run called it: a check nobody
        # called is the very failure a check-first lesson is learned from.
        tools = ({c.tool for r in runs for c in r.calls} | {h.tool for r in runs for h in r.limits if h.tool}
                 | {t for r in runs for t in r.toolset})
        # What a distiller could have copied from: the tool outputs of (up to 500 of) the runs.
        sample = runs[-_MAX_OUTPUT_RUNS:]
        outputs: list[str | tuple[str, str]] = [
            (c.result, f"the `{c.tool}` output in trajectory {r.id}") for r in sample for c in r.calls if c.result]
        outputs += [(c.error, f"the `{c.tool}` error in trajectory {r.id}") for r in sample for c in r.calls if c.error]
        return cls(hidden=hidden, known_tools=tools, tool_outputs=outputs, **kw)


# -- patterns --------------------------------------------------------------------------------------

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


def _without_typed_numbers(text: str, content: SkillContent) -> str:
    """``text`` without the renderer's sentences whose numbers are a lesson's typed fields, not
    values from a run: an answer_unit lesson's scale and the conversion it works from it ("divided
    by 1000 (for example 750 is 0.75)"). Its field name stays, to be checked like any word."""
    for lesson in content.lessons:
        if lesson.kind == LessonKind.answer_unit:
            text = text.replace(sentence(lesson), f" {lesson.field} ")
    return text


def lint_content(content: SkillContent, ctx: LintContext | None = None,
                 *, previous: SkillContent | None = None) -> LintResult:
    """Check ``content``; ``previous`` (the version it edits) exempts text a person already had."""
    ctx = ctx or LintContext()
    result = LintResult()
    add = result.findings.append
    # Text that was already in the version being edited is not the distiller's doing: only
    # lines it adds are held to the evidence-based rules.
    new_text = added_text(content, previous)

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
                    + ", which is neither a tool of this skill nor one offered or seen in its evidence"))
    if ctx.tool_outputs:
        skill_shingles = _shingles(new_text)
        if skill_shingles:
            for output in ctx.tool_outputs:
                text, source = output if isinstance(output, tuple) else (output, "a tool output")
                common = skill_shingles & _shingles(text)
                if common:
                    add(Finding("tool-output", QUARANTINE,
                                f"copies text from {source}: " + repr(" ".join(min(common)))))
                    break

    # Hidden literals and de-hardcoding (<placeholders> and known tool names aside).
    plain = _PLACEHOLDER.sub(" ", _without_typed_numbers(new_text, content))
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
