"""Methods as data: what successful runs did, with the request's own values templated out.

A value that appears both in the task and in a tool argument is an *instance value*: it changes
with the request (a customer's name, an order number, the item a game asks for), so it is never
part of a lesson. Three things follow from that rule:

- **Task templates** (``templates.task_template``) replace instance values in the task with a
  placeholder, so "please refund ann's last order" and "... bob's ..." are one kind of request.
- **Skeletons**: a run's steps with every argument word that also appears in its own task
  blanked. Runs of one kind of request share a skeleton even when their tasks share few words,
  so the round can group runs "by method" as well as by task.
- **Method steps** (:func:`method_steps`): across the successes that followed one skeleton,
  argument words that never change stay literal (``open``, ``from``), words that change become
  numbered placeholders in the order the request names them (``take <value_1> from
  <value_2>``), and a whole argument that changes becomes ``<parameter>``; both with where the
  value came from (the request, or an earlier tool's result), in ``MethodStep.sources``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any, Iterable, Sequence

from skillbank.lessons import MethodStep

__all__ = ["instance_values", "skeleton", "method_key", "method_steps", "placeholder", "word_tokens", "leaves",
           "BLANK"]

BLANK = "_"
# A word, with the punctuation that can sit inside one (an e-mail, an id, "o-ann-7") but not a
# full stop or comma after it.
_WORD = re.compile(r"\w(?:[\w'’.@:/#+-]*\w)?", re.UNICODE)
_ENUM = re.compile(r"^[a-z][a-z _-]{0,19}$")


def word_tokens(text: str) -> list[str]:
    return _WORD.findall(text)


def placeholder(param: str) -> str:
    return "<" + (re.sub(r"[^a-z0-9_]+", "_", param.lower()).strip("_") or "value") + ">"


def _occurs(value: str, text: str) -> bool:
    return bool(re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", text, re.I))


def leaves(value: Any) -> Iterable[Any]:
    """The scalar values inside an argument value (nested dicts and lists walked; booleans skipped)."""
    if isinstance(value, dict):
        for v in value.values():
            yield from leaves(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from leaves(v)
    elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
        yield value


def instance_values(task: str, calls: Iterable[Any]) -> list[str]:
    """Whole argument values of ``calls`` that also appear in ``task``, longest first."""
    found = set()
    for call in calls:
        for value in leaves(call.args):
            text = str(value).strip()
            if len(text) >= 2 and _occurs(text, task):
                found.add(text)
    return sorted(found, key=lambda v: (-len(v), v))


def _skeleton_value(value: Any, task_words: set[str]) -> str:
    if not isinstance(value, str):
        return BLANK if str(value).lower() in task_words else repr(value)
    return " ".join(BLANK if w.lower() in task_words else w for w in word_tokens(value))


def skeleton(task: str, calls: Sequence[Any]) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """The run's steps (immediate repeats collapsed), each ``(tool, ((param, value shape), ...))``
    with every argument word that appears in ``task`` blanked."""
    words = {w.lower() for w in word_tokens(task)}
    out: list[tuple[str, tuple[tuple[str, str], ...]]] = []
    for call in calls:
        args = tuple(sorted((str(k), _skeleton_value(v, words)) for k, v in (call.args or {}).items()))
        step = (call.tool, args)
        if not out or out[-1] != step:
            out.append(step)
    return tuple(out)


def _collapsed_tools(calls: Sequence[Any]) -> list[str]:
    out: list[str] = []
    for call in calls:
        if not out or out[-1] != call.tool:
            out.append(call.tool)
    return out


def method_key(task: str, calls: Sequence[Any]) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """What makes two runs follow the same method.

    Where the run uses two or more tools, their order (immediate repeats collapsed): argument
    values then vary with the request in ways no rule can template safely (a date the request
    only describes, an id from a result). Where one tool does everything (``act(command)``,
    ``run_sql(query)``) the tool order says nothing, and the :func:`skeleton` (arguments with
    the request's words blanked) does.
    """
    tools = _collapsed_tools(calls)
    if len(set(tools)) >= 2:
        return tuple((t, ()) for t in tools)
    return skeleton(task, calls)


def _key_calls(run: Any, key: tuple) -> list[Any]:
    """The first call of each step of ``key`` in ``run`` (which follows ``key``)."""
    words = {w.lower() for w in word_tokens(run.task)}
    out, last = [], None
    for call in run.calls:
        step = (call.tool, ()) if key and key[0][1] == () else \
            (call.tool, tuple(sorted((str(k), _skeleton_value(v, words)) for k, v in call.args.items())))
        if step != last:
            out.append(call)
            last = step
    return out[: len(key)]


def _source(value: Any, run: Any, earlier: Sequence[Any]) -> str | None:
    text = str(value)
    if len(text) < 2:
        return None
    if _occurs(text, run.task):
        return "request"
    for call in reversed(earlier):
        if call.result and text in call.result:
            return call.tool
    return None


def _slot_order(run: Any, tokens: Iterable[str]) -> dict[str, int]:
    """Varying words numbered by where the run's task first names them (then by first use)."""
    task = run.task.lower()
    ordered = sorted(dict.fromkeys(tokens), key=lambda t: (task.find(t.lower()) % (len(task) + 1), t))
    return {t.lower(): i for i, t in enumerate(ordered, 1)}


def method_steps(runs: Sequence[Any], key: tuple) -> list[MethodStep]:
    """The method ``runs`` (successes that followed one :func:`method_key`) share, with
    instance values templated out (see the module docstring)."""
    n_steps = len(key)
    per_run = [(_key_calls(r, key), r) for r in runs]
    per_run = [(calls, r) for calls, r in per_run if len(calls) == n_steps]
    if not per_run:
        return []
    # Words that vary across runs at one position of one argument, per run: numbered by where
    # each run's task names them, so <value_1> is the same slot in every step.
    varying: dict[str, set[str]] = defaultdict(set)  # run id -> varying words
    token_shape: dict[tuple[int, str], list[str | None]] = {}
    for i in range(n_steps):
        params = Counter(k for calls, _ in per_run for k in calls[i].args)
        for param, count in params.items():
            if count * 2 < len(per_run):
                continue
            values = [calls[i].args.get(param) for calls, _ in per_run]
            strings = [v for v in values if isinstance(v, str)]
            if len(strings) != len(values) or len({v for v in strings}) == 1:
                continue
            token_lists = [word_tokens(v) for v in strings]
            if len({len(t) for t in token_lists}) != 1 or len(token_lists[0]) < 2:
                continue  # not aligned word by word: the whole value is the slot
            shape: list[str | None] = []
            for position in range(len(token_lists[0])):
                column = [t[position] for t in token_lists]
                same = len({c.lower() for c in column}) == 1
                shape.append(column[0] if same else None)
                if not same:
                    for (_, run), word in zip(per_run, column):
                        varying[run.id].add(word)
            if all(s is not None for s in shape) or all(s is None for s in shape):
                continue
            token_shape[(i, param)] = shape
    steps: list[MethodStep] = []
    first_calls, first_run = per_run[0]
    order = _slot_order(first_run, varying.get(first_run.id, ()))
    for i in range(n_steps):
        tool = first_calls[i].tool
        params = Counter(k for calls, _ in per_run for k in calls[i].args)
        args: dict[str, str] = {}
        sources: dict[str, str] = {}
        for param, count in params.most_common():
            if count * 2 < len(per_run):
                continue
            values = [calls[i].args.get(param) for calls, _ in per_run]
            if (i, param) in token_shape:
                words = word_tokens(str(first_calls[i].args[param]))
                shape = token_shape[(i, param)]
                args[param] = " ".join(
                    word if keep is not None else f"<value_{order.get(word.lower(), 0)}>"
                    for word, keep in zip(words, shape))
                # Where each slot's words come from, by the runs' majority (keyed by slot name).
                for position, (word, keep) in enumerate(zip(words, shape)):
                    if keep is not None:
                        continue
                    found = Counter(s for calls, run in per_run
                                    if (s := _source(word_tokens(str(calls[i].args[param]))[position], run,
                                                     calls[:i])) is not None)
                    source, hits = found.most_common(1)[0] if found else (None, 0)
                    if source is not None and hits * 2 >= len(per_run):
                        sources[f"value_{order.get(word.lower(), 0)}"] = source
                continue
            found = Counter(s for (calls, run), v in zip(per_run, values)
                            if (s := _source(v, run, calls[:i])) is not None)
            source, hits = found.most_common(1)[0] if found else (None, 0)
            constant = len({repr(v) for v in values}) == 1
            literal = source is None or hits * 2 < len(per_run)
            if constant and len(per_run) >= 2 and literal and _plain_constant(values[0]):
                args[param] = str(values[0]).lower() if isinstance(values[0], bool) else str(values[0])
                continue
            args[param] = placeholder(param)
            if source is not None and hits * 2 >= len(per_run):
                sources[param] = source
        steps.append(MethodStep(tool=tool, args=args, sources=sources))
    return _apart_by_role(steps, per_run)


def _apart_by_role(steps: list[MethodStep], per_run: Sequence[tuple[list[Any], Any]]) -> list[MethodStep]:
    """One placeholder per value, never one for two: where two steps pass one parameter values
    that differ within a run ("turn on the kitchen, turn off the hall": ``set_light`` twice),
    each value gets its own placeholder, numbered by where the request names it (``<room_1>``
    is the room named first), so a model cannot switch the wrong one off. Steps that pass the
    same value (look the room up, then set it) keep one placeholder."""
    uses: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for i, step in enumerate(steps):
        for param, shape in step.args.items():
            if shape == placeholder(param):
                uses[shape].append((i, param))
    renames: dict[tuple[int, str], str] = {}
    for name, where in uses.items():
        roles = _roles(where, per_run)
        if len(roles) < 2:
            continue
        for n, role in enumerate(roles, 1):
            for use in role:
                renames[use] = f"{name[:-1]}_{n}>"
    if not renames:
        return steps
    return [step.model_copy(update={"args": {param: renames.get((i, param), shape)
                                             for param, shape in step.args.items()}})
            for i, step in enumerate(steps)]


def _roles(where: list[tuple[int, str]], per_run: Sequence[tuple[list[Any], Any]]) -> list[list[tuple[int, str]]]:
    """The uses of one placeholder grouped by value (uses whose values are equal in most runs
    share a group), the groups ordered by where the runs' requests name their values."""
    def value(calls: list[Any], use: tuple[int, str]) -> str:
        return str(calls[use[0]].args.get(use[1], "")).lower()

    groups: list[list[tuple[int, str]]] = []
    for use in where:
        for group in groups:
            same = sum(1 for calls, _ in per_run if value(calls, group[0]) == value(calls, use))
            if same * 2 > len(per_run):
                group.append(use)
                break
        else:
            groups.append([use])

    def named_at(group: list[tuple[int, str]]) -> tuple[float, int]:
        found = sorted(p for calls, run in per_run if (p := run.task.lower().find(value(calls, group[0]))) >= 0)
        return (found[len(found) // 2] if found else float("inf"), group[0][0])

    return sorted(groups, key=named_at)


def _plain_constant(value: Any) -> bool:
    """A value every run passed that reads as part of the method, not of one request."""
    return (value is None or isinstance(value, bool) or (isinstance(value, int) and abs(value) < 100)
            or (isinstance(value, str) and bool(_ENUM.match(value))))
