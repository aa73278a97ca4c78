"""Worked examples for procedure and check_first lessons, taken from successful runs.

A small model follows a demonstration better than a rule. Each procedure or check_first lesson
of a distilled skill gets up to ``EvolutionConfig.examples_per_lesson`` examples
(:class:`~skillbank.lessons.Example`), one per successful run that followed it, requests of
different shapes first. In an example every instance value is a placeholder that says where it
came from: an argument value found in the request is ``<param>`` "(from the request)", one found
in an earlier result is ``<param>`` "(from the result of `tool`)", a result field is kept only
when its value is a constant of the method (a flag, a small number, a status word that recurs
across runs) and the request and answer are templated like task templates (numbers, names,
e-mail addresses, ids and quoted text become placeholders). Then the example goes through the
same lint as every skill text (``lint.lint_content``, held to the runs it came from); one with
any finding is left out. The round lints the whole version again, examples included.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import AbstractSet, Any, Callable, Sequence

from skillbank.evolution._evidence import Run, ToolCall, instance_literals, request_words
from skillbank.evolution._lint import LintContext, lint_content
from skillbank.evolution._methods import _plain_constant, _source, leaves, placeholder
from skillbank.evolution._templates import task_template
from skillbank.lessons import Example, Lesson, LessonKind, MethodStep, example_text
from skillbank.models import SkillContent

__all__ = ["attach_examples", "example_of"]

_KINDS = (LessonKind.procedure, LessonKind.check_first)


def _shows_a_method(lesson: Lesson) -> bool:
    """A lesson a successful run can demonstrate: a procedure, a check, a step not to skip."""
    return lesson.kind in _KINDS or (lesson.kind == LessonKind.pitfall and lesson.avoid == "skip")
_MAX_CALLS = 6
_MAX_RESULT_FIELDS = 4
_ANSWER_CHARS = 160
_PLACEHOLDER = re.compile(r"(<[a-z][a-z0-9_]*>)")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def attach_examples(content: SkillContent, runs: Sequence[Run], *, keep: int,
                    scrubber: Callable[[str], str] | None = None) -> SkillContent:
    """``content`` with up to ``keep`` worked examples on each procedure or check_first lesson
    that has none yet, from the successes among ``runs`` (``keep`` 0: ``content`` unchanged).
    Lessons that already carry examples keep them, so a version does not change just because a
    round saw other runs."""
    ok = [r for r in runs if r.success and not r.suspect and r.calls]
    if keep <= 0 or not ok or not any(_shows_a_method(x) and not x.examples for x in content.lessons):
        return content
    ctx = LintContext.for_runs(ok, instance_literals(ok), request_words=request_words(ok), scrubber=scrubber)
    lessons, changed = [], False
    for lesson in content.lessons:
        if _shows_a_method(lesson) and not lesson.examples and not lesson.general:
            found = _examples(lesson, ok, ctx, keep, content.tools)
            if found:
                lesson, changed = lesson.model_copy(update={"examples": tuple(found)}), True
        lessons.append(lesson)
    if not changed:
        return content
    return SkillContent(**{**content.model_dump(exclude={"body", "lessons"}), "lessons": tuple(lessons)})


def _examples(lesson: Lesson, runs: Sequence[Run], ctx: LintContext, keep: int,
              tools: Sequence[str]) -> list[Example]:
    out: list[Example] = []
    requests: set[str] = set()
    recurring = _recurring_values(runs)
    for run in runs:
        example = example_of(lesson, run, recurring)
        if example is None or example.request in requests:
            continue
        probe = SkillContent(name="worked-example", description="A worked example of a lesson.",
                             body=example_text(example), tools=tuple(tools))
        if not lint_content(probe, ctx).ok:
            continue
        out.append(example)
        requests.add(example.request)
        if len(out) >= keep:
            break
    return out


def _recurring_values(runs: Sequence[Run]) -> set[tuple[str, str, str]]:
    """``(tool, field, value)`` a result returned in two or more runs: part of the method (a
    status, a flag), not of one request."""
    counts: Counter = Counter()
    for run in runs:
        seen = {(c.tool, k, str(v).lower()) for c in run.calls for k, v in _result_fields(c).items()}
        counts.update(seen)
    return {key for key, n in counts.items() if n >= 2}


def _calls_for(lesson: Lesson, run: Run) -> list[ToolCall]:
    """The calls of ``run`` that show ``lesson``: the method's tools in order, or every call up
    to the action a check guards, the check among them (immediate repeats collapsed)."""
    calls: list[ToolCall] = []
    for call in run.calls:
        if call.ok and not (calls and calls[-1].key == call.key):
            calls.append(call)
    if lesson.kind == LessonKind.check_first:
        check = next((i for i, c in enumerate(calls) if c.tool == lesson.check), None)
        if check is None:  # no check, so no action after it
            return []
        action = next((i for i, c in enumerate(calls) if c.tool == lesson.tool and i > check), None)
        return calls[: action + 1][-_MAX_CALLS:] if action is not None and action - check < _MAX_CALLS else []
    wanted = {s.tool for s in lesson.steps} or {lesson.tool}
    if not wanted <= {c.tool for c in calls}:
        return []
    return [c for c in calls if c.tool in wanted][:_MAX_CALLS]


def example_of(lesson: Lesson, run: Run, recurring: AbstractSet[tuple[str, str, str]] = frozenset()) -> Example | None:
    """``lesson`` as ``run`` (a success) followed it, instance values as placeholders; ``None``
    when the run does not show the lesson."""
    calls = _calls_for(lesson, run)
    if not calls:
        return None
    # Argument values the lesson's own method keeps literal (the same in every run it came from).
    constants = {(s.tool, p): v.lower() for s in lesson.steps for p, v in s.args.items() if "<" not in v}
    values: dict[str, str] = {}  # instance value (lower-cased) -> its placeholder
    steps = []
    for call in calls:
        args, sources = {}, {}
        for param, value in call.args.items():
            if _ISO_DATE.fullmatch(str(value).strip()):
                # A date is an instance value even when every run passed the same one (they all
                # meant "tomorrow" on the same day): shown as its form, never as a literal.
                args[param] = "<date>"
                values.setdefault(str(value).lower(), "<date>")
                continue
            if constants.get((call.tool, param)) == str(value).lower():
                args[param] = constants[(call.tool, param)]
                continue
            source = _source(value, run, run.calls[: run.calls.index(call)])
            if source is None and _plain_constant(value) and not isinstance(value, (dict, list)):
                args[param] = str(value).lower() if isinstance(value, bool) else str(value)
                continue
            args[param] = placeholder(param)
            if source is not None:
                sources[param] = source
            for leaf in leaves(value):
                values.setdefault(str(leaf).lower(), args[param])
        steps.append(MethodStep(tool=call.tool, args=args, sources=sources))
    # The key result: the check's (it decides whether to act), or the method's first call's.
    key = next(c for c in calls if c.tool == lesson.check) if lesson.kind == LessonKind.check_first else calls[0]
    result = {}
    for name, value in list(_result_fields(key).items()):
        text = str(value).lower()
        if (key.tool, name, text) in recurring and _plain_constant(value):
            result[name] = text
        else:
            values.setdefault(text, placeholder(name))
    result = dict(list(result.items())[:_MAX_RESULT_FIELDS])
    for call in calls:  # values from later results, for the answer
        for name, value in _result_fields(call).items():
            values.setdefault(str(value).lower(), placeholder(name))
    answer = _shape(run.answer, values)
    if answer and len(answer) > _ANSWER_CHARS:
        answer = answer[:_ANSWER_CHARS].rsplit(" ", 1)[0] + " …"
    return Example(request=_shape(run.task, values) or "", calls=tuple(steps), result_tool=key.tool if result else None,
                   result=result, answer=answer or None)


def _result_fields(call: ToolCall) -> dict[str, Any]:
    """The scalar top-level fields of a call's JSON result (none for other results)."""
    try:
        data = json.loads(call.result or "")
    except (TypeError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items()
            if v is not None and not isinstance(v, (dict, list)) and str(v).strip()}


def _shape(text: str | None, values: dict[str, str]) -> str:
    """``text`` with the known instance values as their placeholders and the rest templated
    like a task (``templates.task_template``), placeholders kept as they are."""
    if not text:
        return ""
    text = " ".join(text.split())
    for value in sorted((v for v in values if len(v) >= 2), key=len, reverse=True):
        text = re.sub(rf"(?<![\w<]){re.escape(value)}(?![\w>])", values[value], text, flags=re.I)
    parts = _PLACEHOLDER.split(text)
    shaped = []
    for part in parts:
        if _PLACEHOLDER.fullmatch(part):
            shaped.append(part)
        elif part.strip():
            lead = " " if part[0].isspace() else ""
            tail = " " if part[-1].isspace() else ""
            shaped.append(lead + task_template(part) + tail)
        else:
            shaped.append(part)
    return re.sub(r"([(\[]) | ([)\]])", r"\1\2", "".join(shaped)).strip()
