"""``RuleDistiller``: deterministic, model-free distillation (the offline default).

Everything it writes is lessons (``skillbank.lessons``); the body is rendered from them.

- **Procedures** come from successful runs: the most common method (tool calls with their
  argument shapes, immediate repeats collapsed, the request's own values templated out; see
  ``_methods.py``) that at least ``min_support`` successes followed and that has at least
  ``min_procedure_steps`` distinct steps. A one-tool agent (``act(command)``) gets a procedure
  too: its steps differ in their arguments.
- **Contrast** of successes and failures gives pitfalls and checks: a check the successes always
  did first and the failures skipped (``check_first``), a question the successes asked the user
  before an action that the failures did not (``ask_for``), a step every success took and most
  failures left out (``skip``), a step only failures took (``call``), repeated identical calls.
- **The kinds' own contrasts**: every registered kind with a contrast learner
  (``KindSpec.contrast_learner``, ``skillbank.lessons.ContrastLearner``) says what the
  successes did that the failures did not, in its kind's lessons: a result field the successes
  stated in the user's unit (``answer_unit``), the time or date the user said
  (``stated_time``, ``stated_date``; opt-in learners such as these run only with
  ``EvolutionConfig.learn_stated_values``). A learner that says which call values its lessons
  explain is asked before the pitfalls: a pitfall about a call whose only telling value a lesson
  explains is that same mistake seen as a correlation, and is not proposed beside it. This
  module's code names none of those kinds.
- **No tool**: requests whose successes called no tool at all while failures did (small talk a
  model answers with a lookup) teach ``no_tool``. It stays here, not with its kind: it is a
  whole skill (its name, a description that quotes each wording of the request, a pitfall skill
  of its own) proposed only when the cluster has no method, not a lesson added to a skill.
- **Guards** come from limit events through templates (``_guards.py``).
- **Narrowing**: a skill injected into runs that never touched its tools, and failed there, gets
  a "not for" clause in its description.
- **Splits**: successes that follow two methods with disjoint tools, or a body over
  ``split_chars``, split into two skills.

A lesson about a tool the skill does not concern never enters it (``relevant``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Iterable, Sequence

from skillbank.evolution._cluster import Cluster
from skillbank.evolution.config import EvolutionConfig
from skillbank.evolution._distiller import Distiller, SkillEvidence, merge_lessons, relevant
from skillbank.evolution._evidence import Run
from skillbank.evolution._examples import attach_examples
from skillbank.evolution._guards import situation_lessons, slug
from skillbank.evolution._methods import BLANK, method_steps, skeleton
from skillbank.evolution._naming import fit_name
from skillbank.evolution._proposals import ChangeKind, Proposal
from skillbank.evolution._templates import common_pattern, common_words, describable
from skillbank.lessons import (AskFor, CheckFirst, ContrastLearner, Lesson, LessonKind, MethodStep, NoTool, Pitfall,
                               Procedure, contrast_learners)
from skillbank.models import SkillContent, SkillKind
from skillbank._toolnames import names_tool

_CHANGES_METHOD = (LessonKind.procedure,)


def consensus(runs: Sequence[Run]) -> tuple[tuple, list[Run]]:
    """The most common non-empty method (``Run.method``) among ``runs`` and the runs that followed it."""
    counts = Counter(r.method for r in runs if r.method)
    if not counts:
        return (), []
    best = max(counts.items(), key=lambda kv: (kv[1], len(kv[0]), repr(kv[0])))[0]
    return best, [r for r in runs if r.method == best]


def _tools_of(skel: tuple) -> tuple[str, ...]:
    return tuple(dict.fromkeys(tool for tool, _ in skel))


def _step_of(skel_step: tuple) -> MethodStep:
    """A skeleton step as a method step: the request's words (blanked) read ``<value>``."""
    tool, args = skel_step
    return MethodStep(tool=tool, args={p: " ".join("<value>" if w == BLANK else w for w in v.split())
                                       for p, v in args})


def _explained_steps(skel: tuple, explained: Sequence[tuple[ContrastLearner, Lesson]]) -> set:
    """The steps of ``skel`` that pass a value one of the ``explained`` lessons explains
    (``ContrastLearner.explains``)."""
    if not explained:
        return set()
    return {step for step in skel
            if any(learner.explains is not None and learner.explains(lesson, step[0], p, v)
                   for p, v in step[1] for learner, lesson in explained)}


def existing_tools(runs: Sequence[Run]) -> set[str]:
    """The tools that exist for ``runs``: those they were offered or, for runs recorded without
    the tools offered, those some call ran without an error (a name that is not a tool never does)."""
    offered = {t for r in runs for t in r.toolset}
    return offered or {c.tool for r in runs for c in r.calls if c.ok}


def mistakes(ok: Sequence[Run], bad: Sequence[Run], skel: tuple,
             limit: int = 4, min_support: int = 2, stated_values: bool = False) -> list[tuple[Lesson, str]]:
    """``[(lesson, why)]`` contrasting failures with the successes that followed ``skel``.

    Only tools that exist are compared (a call to an invented name is a different mistake, see
    ``toolnames``), and a check is learned only from runs whose every call was to a real tool,
    with at least ``min_support`` successes that checked first. Then every registered kind's
    contrast learner is asked (with ``stated_values``, as ``EvolutionConfig.learn_stated_values``
    says, the opt-in ones too: the stated time and date, whose reading of the user's words is
    English): those that explain call values before the pitfalls, the others last.
    """
    out: list[tuple[Lesson, str]] = []
    if not bad:
        return out
    real = existing_tools([*ok, *bad])
    seq = tuple(t for t in _tools_of(skel) if t in real)
    need_bad = max(1, math.ceil(len(bad) / 2))
    checks: set[str] = set()
    clean_ok = [r for r in ok if set(r.tools) <= real]
    clean_bad = [r for r in bad if set(r.tools) <= real]
    # A check the successes always did before an action and the failures skipped.
    for j, action in enumerate(seq):
        for check in reversed(seq[:j]):
            if check == action or check in checks:
                continue
            ok_with_action = [r for r in clean_ok if action in r.tools]
            ok_first = sum(1 for r in ok_with_action if check in r.tools[: r.tools.index(action)])
            if ok_first < min_support or ok_first / len(ok_with_action) < 0.8:
                continue
            skipped = [r for r in clean_bad if action in r.tools and check not in r.tools[: r.tools.index(action)]]
            acting = [r for r in clean_bad if action in r.tools]
            if len(skipped) >= need_bad or (skipped and len(skipped) * 2 >= len(acting)):
                out.append((CheckFirst(check=check, tool=action),
                            f"{len(skipped)} failed run(s) called `{action}` without `{check}` "
                            f"first; {ok_first} of {len(ok_with_action)} successes checked first"))
                checks.add(check)
                break
    # Asking first: successes asked the user before an action where failures of the same kind of
    # request (the same template) went ahead; other requests in the cluster may need no question.
    for action in seq:
        asked = [r for r in ok if action in r.tools and r.asked_before(action)]
        templates = {r.template for r in asked}
        alike = [r for r in ok if action in r.tools and r.template in templates]
        if len(asked) < 2 or len(asked) < 0.8 * len(alike):
            continue
        comparable = [r for r in bad if action in r.tools and r.template in templates]
        went_ahead = [r for r in comparable if not r.asked_before(action)]
        if went_ahead and len(went_ahead) * 2 >= len(comparable):
            out.append((AskFor(tool=action),
                        f"{len(went_ahead)} failed run(s) called `{action}` without asking the user; "
                        f"{len(asked)} of {len(alike)} successes of the same requests asked first"))
            break
    # The kinds' learners whose lessons explain call values (the time or date the user said,
    # passed or not): the cause a pitfall about the same call's literal value would only
    # correlate with.
    learners = contrast_learners(opt_in=stated_values)
    explained: list[tuple[ContrastLearner, Lesson]] = []
    for learner in learners:
        if learner.explains is not None:
            found = learner.learn(ok, bad, min_support)
            out += found
            explained += [(learner, lesson) for lesson, _ in found]
    # A step every success took and most failures left out; a step only failures took. By tool
    # where the tools tell the methods apart, by step (tool and argument shape) where one tool
    # does everything.
    one_tool = len(seq) == 1
    steps_of = (lambda r: set(r.skeleton) - _explained_steps(r.skeleton, explained)) if one_tool \
        else (lambda r: {(t,) for t in r.tools})
    label = (lambda s: f"`{s[0]}` {dict(s[1])}") if one_tool else (lambda s: f"`{s[0]}`")
    shown = (lambda s: _step_of(s)) if one_tool else None
    ok_steps = [steps_of(r) for r in ok]
    common = set.intersection(*ok_steps) if ok_steps else set()
    for step in (list(skel) if one_tool else [(t,) for t in seq]):
        if step not in common or (not one_tool and step[0] in checks):
            continue
        missing = [r for r in bad if step not in steps_of(r)]
        # A failure that called nothing counts when its answer names the tool: the call was
        # described instead of made (a small model's commonest way to skip a step).
        if len(missing) >= need_bad and any(r.calls or names_tool(r.answer, step[0]) for r in missing):
            lesson = Pitfall(avoid="skip", tool=step[0],
                            steps=(shown(step),) if shown else ())
            out.append((lesson, f"{len(missing)} failed run(s) never took {label(step)}"))
    seen_ok = set().union(*ok_steps) if ok_steps else set()
    # A step only failures took is a cause, not a correlation, when it fails where the same call
    # otherwise succeeds: by tool, failures of requests the successes also served (the same
    # template); by argument shape (one tool), failures where that very call returned an error
    # (the trace: "do not call `set_light` with `brightness`=`0`" was learned from runs that
    # failed for another reason, the call itself having worked).
    served = {r.template for r in ok}
    caused = (lambda r, s: any(not c.ok and skeleton(r.task, [c])[0] == s for c in r.calls)) if one_tool \
        else (lambda r, s: r.template in served)
    bad_counts = Counter(s for r in bad for s in steps_of(r) if s not in seen_ok and s[0] in real and caused(r, s))
    for step, n in bad_counts.most_common(2):
        if n >= need_bad and ok:
            lesson = Pitfall(avoid="call", tool=step[0],
                            steps=(shown(step),) if shown else ())
            out.append((lesson, f"{n} failed run(s) took {label(step)}, no success did"))
    # Repeating the same call.
    repeaters = [r for r in bad if r.repeats >= 2]
    if len(repeaters) >= need_bad and not any(r.repeats >= 2 for r in ok):
        out.append((Pitfall(avoid="repeat"),
                    f"{len(repeaters)} failed run(s) repeated identical calls"))
    # The kinds' other learners (what the successes' replies said: a result field in the user's unit).
    for learner in learners:
        if learner.explains is None:
            out += learner.learn(ok, bad, min_support)
    return out[:limit]


def _what_it_does(tool: str, steps: Sequence[MethodStep]) -> list[str]:
    """A tool's name as words, or, for a one-word tool that does everything (``act``,
    ``run``), the verbs its steps start with: ``take-open-put-with-act``."""
    words = slug(tool, 24).split("-")
    if len(words) >= 2:
        return words
    verbs = [v.split()[0].lower() for s in steps if s.tool == tool for v in s.args.values()
             if v.split() and re.fullmatch(r"[A-Za-z]+", v.split()[0])]
    verbs = list(dict.fromkeys(verbs))[:3]
    return [*verbs, "with", *words] if verbs else ["use", *words]


def name_for(templates: Sequence[str], tools: Sequence[str], suffix: str = "",
             steps: Sequence[MethodStep] = ()) -> str:
    """Up to four words every request shares (no contractions); with fewer than two, what the
    method does: the one word and the last tool (``schedule-create-event``), the tools
    (``use-find-order-then-issue-refund``), a one-word tool's commands (``take-open-put-with-act``,
    never ``get-act``); whole words only."""
    words = [w for w in common_words(templates, limit=8) if "'" not in w and "’" not in w][:4]
    if len(words) >= 2:
        parts = [slug(w, 16) for w in words]
    elif words and tools:
        doing = _what_it_does(tools[-1], steps)
        word = slug(words[0], 16)
        generic = doing[0] == "use" or "with" in doing or word in doing
        parts = doing if generic else [word, *doing]
    else:
        parts = ["use", *[p for t in tools[:3] for p in (slug(t, 16), "then")][:-1]]
        if len(set(tools)) == 1:
            parts = _what_it_does(tools[0], steps)
    return fit_name(parts, suffix=suffix, fallback="learned-procedure")


def _like(templates: Sequence[str]) -> str:
    """The requests' common pattern, for a description (no placeholders)."""
    return describable(common_pattern(templates))


def _description(templates: Sequence[str], tools: Sequence[str], what: str) -> str:
    """``When the user asks something like "<pattern>"; <what> `a`, `b`.``"""
    like = _like(templates)
    tool_list = ", ".join(f"`{t}`" for t in dict.fromkeys(tools))
    return (f"When the user asks something like \"{like}\"; {what} {tool_list}."
            if like else f"Requests handled with {tool_list}.")


def toolset_of(runs: Iterable[Run]) -> tuple[str, ...]:
    """The tools the agents of ``runs`` were offered (what a lesson learned from them assumes)."""
    return tuple(sorted({t for r in runs for t in r.toolset}))


class RuleDistiller(Distiller):
    """Deterministic rules; no model. See the module docstring."""

    name = "rule"

    # -- new skills from the uncovered pile ----------------------------------------------------

    def induce(self, cluster: Cluster, config: EvolutionConfig) -> list[Proposal]:
        """A new skill from one cluster of uncovered runs: a :meth:`procedure`, else its
        :meth:`pitfalls`, else a :meth:`no_tools` skill.

        Args:
            cluster: Similar runs into which no skill was injected (from the uncovered pile).
            config: The round's settings.

        Returns:
            One proposal adding the first skill found; empty when none is.
        """
        ok, bad = cluster.successes, cluster.failures
        content, support, why = self.procedure(ok, bad, config)
        if content is None:
            content, support, why = self.pitfalls(ok, bad, config)
        if content is None:
            content, support, why = self.no_tools(ok, bad, config)
        if content is None:
            return []
        return [Proposal(kind=ChangeKind.add, content=content, origin="induce",
                         reason=why, evidence=tuple(r.id for r in support + bad))]

    def method(self, ok: Sequence[Run], config: EvolutionConfig) -> tuple[Lesson | None, list[Run], tuple]:
        """The procedure lesson ``ok`` supports, the runs behind it and their skeleton.

        Args:
            ok: Successful runs.
            config: The round's settings (``min_support``, ``min_procedure_steps``).

        Returns:
            ``(lesson, support, skeleton)``: the most common method as a procedure, the runs
            that followed it and its steps; ``(None, [], ())`` when too few runs followed one
            or it has too few distinct steps.
        """
        skel, support = consensus(ok)
        if not skel or len(support) < config.min_support or len(set(skel)) < config.min_procedure_steps:
            return None, [], ()
        steps = method_steps(support, skel)
        if not steps:
            return None, [], ()
        return Procedure(steps=tuple(steps)), list(support), skel

    def procedure(self, ok: Sequence[Run], bad: Sequence[Run], config: EvolutionConfig,
                  name: str | None = None) -> tuple[SkillContent | None, list[Run], str]:
        """A procedure skill: the :meth:`method` the successes support, with the mistakes the
        failures made against it and examples from the successes.

        Args:
            ok: Successful runs.
            bad: Failed runs, contrasted with ``ok``.
            config: The round's settings.
            name: The skill's name; ``None``: one made from the requests and tools.

        Returns:
            ``(content, support, why)``: the skill, the runs behind its method and the reason
            for the proposal; ``(None, [], "")`` when there is no method.
        """
        lesson, support, skel = self.method(ok, config)
        if lesson is None:
            return None, [], ""
        tools = _tools_of(skel)
        contrast = mistakes(support, bad, skel, limit=config.max_bullets,
                             min_support=config.min_support, stated_values=config.learn_stated_values)
        templates = [r.template for r in support]
        content = SkillContent(
            name=name or name_for(templates, tools, steps=lesson.steps),
            description=_description(templates, tools, "the method uses")[: config.max_description_chars],
            kind=SkillKind.procedure, tools=tools, tags=("learned",),
            lessons=(lesson, *[x for x, _ in contrast]), toolset=toolset_of(support + list(bad)),
        )
        content = attach_examples(content, support, keep=config.examples_per_lesson, scrubber=self.scrubber)
        why = (f"recurring method: {len(support)} successful run(s) followed "
               f"{' > '.join(s.tool for s in lesson.steps)}"
               + (f"; {len(contrast)} mistake(s) from {len(bad)} failure(s)" if contrast else ""))
        return content, list(support), why

    def pitfalls(self, ok: Sequence[Run], bad: Sequence[Run],
                 config: EvolutionConfig) -> tuple[SkillContent | None, list[Run], str]:
        """Lessons without a method, for requests whose successes share a method too short to
        teach but whose failures still differ from them (asked first, checked first).

        Args:
            ok: Successful runs.
            bad: Failed runs, contrasted with ``ok``.
            config: The round's settings.

        Returns:
            ``(content, support, why)``: the pitfall skill, the successes behind it and the
            reason; ``(None, [], "")`` when there are too few successes, no failures or no mistake.
        """
        skel, support = consensus(ok)
        if not skel or len(support) < config.min_support or not bad:
            return None, [], ""
        contrast = mistakes(support, bad, skel, limit=config.max_bullets,
                             min_support=config.min_support, stated_values=config.learn_stated_values)
        if not contrast:
            return None, [], ""
        tools = _tools_of(skel)
        templates = [r.template for r in support]
        content = SkillContent(
            name=name_for(templates, tools, suffix="pitfalls"),
            # Worded so the tool reads as one to call with care, not one to avoid
            # (docs/decisions/0102-pitfall-descriptions.md).
            description=_description(templates, tools,
                                     "mistakes to avoid when calling")[: config.max_description_chars],
            kind=SkillKind.pitfall, tools=tools, tags=("learned",),
            lessons=tuple(x for x, _ in contrast), toolset=toolset_of(support + list(bad)))
        content = attach_examples(content, support, keep=config.examples_per_lesson, scrubber=self.scrubber)
        why = f"recurring mistakes: {'; '.join(why for _, why in contrast)}"
        return content, list(support), why

    def no_tools(self, ok: Sequence[Run], bad: Sequence[Run],
                 config: EvolutionConfig) -> tuple[SkillContent | None, list[Run], str]:
        """``no_tool`` for requests that succeeded only without a tool call and failed with one:
        no success called a tool, and at least ``min_support`` failures did.

        Args:
            ok: Successful runs.
            bad: Failed runs.
            config: The round's settings.

        Returns:
            ``(content, support, why)``: the ``no_tool`` skill, the successes behind it and the
            reason; ``(None, [], "")`` when the runs do not show that pattern or the requests
            cannot be quoted.
        """
        callers = [r for r in bad if r.calls]
        if not ok or any(r.calls for r in ok) or len(callers) < config.min_support:
            return None, [], ""
        templates = [r.template for r in ok]
        # Requests joined by their method (_cluster.py: small talk in several wordings) share no
        # pattern: each wording is quoted then, the most frequent first.
        like = _like(templates) or "\" or \"".join(
            describable(t) for t, _ in Counter(templates).most_common(3) if describable(t))
        if not like:
            return None, [], ""
        content = SkillContent(
            name=name_for(templates, (), suffix="no-tools"),
            description=f"When the user says something like \"{like}\" and asks for nothing a tool "
                        f"does."[: config.max_description_chars],
            kind=SkillKind.pitfall, tags=("learned",), lessons=(NoTool(),),
            toolset=toolset_of(list(ok) + callers))
        why = (f"{len(ok)} successful run(s) called no tool; {len(callers)} failed run(s) called "
               f"{', '.join(sorted({c.tool for r in callers for c in r.calls}))}")
        return content, list(ok), why

    # -- edits to a used skill -----------------------------------------------------------------

    def revise(self, evidence: SkillEvidence, config: EvolutionConfig) -> list[Proposal]:
        """Edits for one used skill: split off a second method, tighten its method, add the
        mistakes and limit lessons about its own tools, narrow its description where it misled,
        split a body over ``split_chars``.

        Args:
            evidence: The skill and the labelled runs it was injected into, with their limit
                situations.
            config: The round's settings.

        Returns:
            An update, with any splits; empty when nothing changes.
        """
        skill = evidence.skill
        ok, bad = evidence.successes, evidence.failures
        lessons = list(skill.content.all_lessons)
        description = skill.description
        reasons: list[str] = []
        used: set[str] = set()
        proposals: list[Proposal] = []

        # Split: successes that follow two methods with disjoint tools.
        split = self._method_split(evidence, config)
        main_ok = ok
        if split is not None:
            main_ok, other_ok, other_content = split
            proposals.append(Proposal(
                kind=ChangeKind.split, content=other_content, parent=skill.id, origin="revise",
                reason=f"split from {skill.name}: {len(other_ok)} successful run(s) followed a "
                       f"different method ({' > '.join(_tools_of(consensus(other_ok)[0]))})",
                evidence=tuple(r.id for r in other_ok)))
            reasons.append(f"narrowed to the method of {len(main_ok)} run(s); the other method was split off")
            used.update(r.id for r in other_ok)

        # Tighten the method.
        method, support, skel = self.method(main_ok, config)
        current = next((x for x in lessons if x.kind == LessonKind.procedure), None)
        if method is not None and method.key != (current.key if current else None):
            if current is None and skill.kind == SkillKind.procedure and (bad or split):
                lessons.insert(0, method)
                reasons.append(f"added the method {len(support)} successful run(s) followed")
                used.update(r.id for r in support)
            elif current is not None:
                old_tools = tuple(dict.fromkeys(s.tool for s in current.steps))
                followed_old = [r for r in bad if r.calls and _tools_of(r.method) == old_tools]
                if split is not None or (bad and len(followed_old) * 2 >= max(1, len(bad))):
                    lessons = [method if x is current else x for x in lessons]
                    reasons.append(f"method changed to {' > '.join(s.tool for s in method.steps)} "
                                   f"({len(support)} successes); {len(followed_old)} failure(s) "
                                   "followed the old method")
                    used.update(r.id for r in support + followed_old)

        # Common mistakes and limit lessons: only those about this skill's own tools.
        own = set(skill.tools)
        contrast = mistakes(main_ok, bad, skel or consensus(main_ok)[0], limit=config.max_bullets,
                             min_support=config.min_support, stated_values=config.learn_stated_values)
        added = merge_lessons(lessons, [x for x, _ in contrast if relevant(x, own)])
        if len(added) > len(lessons):
            lessons = added
            reasons.append("common mistakes: " + "; ".join(why for x, why in contrast if relevant(x, own)))
            used.update(r.id for r in bad)
        for sit in evidence.situations:
            added = merge_lessons(lessons, situation_lessons(sit))
            if [x.key for x in added] != [x.key for x in lessons]:  # added, or a budget replaced
                lessons = added
                reasons.append(f"{'budget' if sit.is_budget else 'capability'} limit: {sit.describe()}")
                used.update(sit.evidence)

        # Narrow the description when the skill was retrieved where it did not apply.
        narrowed = self._narrow(evidence, description, config)
        if narrowed is not None:
            description, why, misfit_ids = narrowed
            reasons.append(why)
            used.update(misfit_ids)

        unchanged = [x.key for x in lessons] == [x.key for x in skill.content.all_lessons]
        if unchanged and description == skill.description and not proposals:
            return []
        tools = skill.tools
        if split is not None:  # the narrowed skill lists the tools it still talks about
            mentioned = {t for x in lessons for t in x.tools()}
            tools = tuple(t for t in skill.tools if t in mentioned) or skill.tools
        content = SkillContent(name=skill.name, description=description, kind=skill.kind, tools=tools,
                               tags=skill.tags, lessons=tuple(lessons),
                               toolset=tuple(sorted(set(skill.content.toolset) | set(toolset_of(evidence.runs)))))
        content = attach_examples(content, main_ok, keep=config.examples_per_lesson, scrubber=self.scrubber)

        # Split a body that grew too long: the mistakes and limits move to a pitfall skill.
        if len(content.body) > config.split_chars:
            pitfalls = self._size_split(content)
            if pitfalls is not None:
                content, spun = pitfalls
                proposals.append(Proposal(
                    kind=ChangeKind.split, content=spun, parent=skill.id, origin="revise",
                    reason=f"split from {skill.name}: its body exceeded {config.split_chars} characters",
                    evidence=tuple(sorted(used))))
                reasons.append("moved mistakes and limits to a separate pitfall skill")

        kind = ChangeKind.split if any(p.kind == ChangeKind.split for p in proposals) else ChangeKind.update
        if content.hash() != skill.content_hash:
            ordered = [r.id for r in evidence.runs if r.id in used] or list(evidence.ids)
            proposals.insert(0, Proposal(kind=kind, content=content, target=skill.id, origin="revise",
                                         reason="; ".join(reasons), evidence=tuple(ordered)))
        return proposals

    def _method_split(self, evidence: SkillEvidence, config: EvolutionConfig):
        """Two methods with disjoint tools that both use the skill's own tools: the skill grew
        too broad. (Runs that never touch its tools are misfits: see :meth:`_narrow`.)"""
        skill = evidence.skill
        if skill.kind != SkillKind.procedure or not skill.tools:
            return None
        own = set(skill.tools)
        ok = [r for r in evidence.successes if own & set(r.tools)]
        counts = Counter(r.method for r in ok if r.method)
        if len(counts) < 2:
            return None
        (first, _), *rest = counts.most_common()
        for second, n2 in rest:
            if n2 < config.min_support:
                break
            a, b = set(_tools_of(first)), set(_tools_of(second))
            if len(a & b) / len(a | b) < 0.34:
                main = [r for r in ok if r.method != second]
                other = [r for r in ok if r.method == second]
                content, _, _ = self.procedure(other, [], config,
                                               name=name_for([r.template for r in other], _tools_of(second)))
                if content is None or content.name == evidence.skill.name:
                    return None
                return main, other, content
        return None

    def _narrow(self, evidence: SkillEvidence, description: str, config: EvolutionConfig):
        skill = evidence.skill
        if not skill.tools:
            return None
        tools = set(skill.tools)
        misfit = [r for r in evidence.runs if r.calls and not tools & set(r.tools)]
        fit = [r for r in evidence.runs if tools & set(r.tools)]
        bad_misfit = [r for r in misfit if not r.success]
        if len(bad_misfit) < config.min_support:
            return None
        misfit_rate = sum(r.success for r in misfit) / len(misfit)
        fit_rate = sum(r.success for r in fit) / len(fit) if fit else 1.0
        if misfit_rate >= fit_rate:
            return None
        like = _like([r.template for r in misfit])
        words = common_words([r.template for r in misfit], limit=3)
        fit_words = set(common_words([r.template for r in fit], limit=8)) if fit else set()
        words = [w for w in words if w not in fit_words]
        if like and not fit_words & set(like.split()):
            clause = f"Not for requests like \"{like}\"."
        elif words:
            clause = "Not for requests about " + ", ".join(words) + "."
        else:
            return None
        base = re.sub(r"\s*Not for requests (?:like|about) [^\n]*$", "", description).strip()
        new = f"{base} {clause}"[: config.max_description_chars]
        if new == description:
            return None
        return new, (f"narrowed: injected into {len(misfit)} run(s) that never used its tools "
                     f"({len(bad_misfit)} failed)"), [r.id for r in misfit]

    @staticmethod
    def _size_split(content: SkillContent):
        moved = [x for x in content.lessons if x.kind not in _CHANGES_METHOD and x.kind != LessonKind.guidance]
        kept = [x for x in content.lessons if x not in moved]
        if not moved or not kept:
            return None
        desc = content.description.rstrip(".")
        spun = SkillContent(
            name=fit_name(content.name.split("-"), suffix="pitfalls"),
            description=f"Mistakes and limits to avoid. {desc}."[:1000], kind=SkillKind.pitfall,
            tools=content.tools, tags=content.tags, lessons=tuple(moved), toolset=content.toolset)
        narrowed = SkillContent(**{**content.model_dump(exclude={"body"}), "lessons": tuple(kept)})
        return narrowed, spun
