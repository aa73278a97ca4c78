"""What every limit situation teaches, pinned byte for byte: the lessons, the guard's name, the
``describe()`` line and the whole guard skill, for every family (with and without a tool or a
detail) and every budget (each limit type, with and without successes). The values were captured
from _guards.py before each kind's limit learner moved into its kind's module; they must not change.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone

import pytest

from skillbank.evolution._evidence import Run, ToolCall
from skillbank.evolution._guards import Situation, guard_content, guard_name, situation_lessons
from skillbank.models import LimitType as L

_AT = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _run(i, success, calls=(), template="", toolset=()):
    return Run(id=f"r{i}", task=f"task {i}", success=success,
               calls=[ToolCall(step=n, tool=t, args=a) for n, (t, a) in enumerate(calls)],
               answer="", limits=[], model_turns=len(calls) + 1, tokens=100, skills={}, started_at=_AT,
               template=template, toolset=tuple(toolset))


def _sit(family, tool=None, detail=None, types=(), failures=None, successes=(), limits=(), called=()):
    fails = failures if failures is not None else [
        _run(1, False, template="book a room for {date}", toolset=("b_tool", "a_tool")),
        _run(2, False, template="book a room for {date}", toolset=("c_tool",))]
    return Situation(family, tool, detail, types=Counter(types), failures=list(fails),
                     successes=list(successes), limits=list(limits), called=set(called))


def _calls(n, tool="search"):
    return [(tool, {"q": str(k)}) for k in range(n)]


CASES = {
    "missing_tool": lambda: _sit("missing_tool", "open_window", types={L.missing_tool: 2}),
    "missing_parameter": lambda: _sit("missing_parameter", "set_climate", "fan_speed"),
    "missing_parameter-no-detail": lambda: _sit("missing_parameter", "setClimate"),
    "invalid_tool_args": lambda: _sit("invalid_tool_args", "book_flight", "date"),
    "invalid_tool_args-no-detail": lambda: _sit("invalid_tool_args", "book_flight"),
    "unknown_field": lambda: _sit("unknown_field", "track_order", "eta"),
    "unknown_field-no-detail": lambda: _sit("unknown_field", "track_order"),
    "tool_error": lambda: _sit("tool_error", "hold_table", failures=[_run(1, False)]),
    "policy_refusal": lambda: _sit("policy_refusal", "refund", successes=[_run(3, True)]),
    "policy_refusal-no-tool": lambda: _sit("policy_refusal"),
    "wrong_tool_name": lambda: _sit("wrong_tool_name", "create_event", called={"new_event", "add_event"}),
    "check_first": lambda: _sit("check_first", "book_room", "get_room_status"),
    "mv-one-word-tool": lambda: _sit("tool_error", "mv"),
    "odd-tool-name": lambda: _sit("missing_tool", "open window!"),
    "steps-tool-calls-limit-comfortable": lambda: _sit(
        "budget:steps", "search", types={L.tool_call_limit: 2}, limits=[12, 10],
        successes=[_run(5, True, _calls(3)), _run(6, True, _calls(9))]),
    "steps-tool-calls-limit-only-close": lambda: _sit(
        "budget:steps", "search", types={L.tool_call_limit: 1}, limits=[10], successes=[_run(6, True, _calls(9))]),
    "steps-recursion": lambda: _sit("budget:steps", None, types={L.recursion_limit: 1}, limits=[25]),
    "steps-step-limit-tiny": lambda: _sit("budget:steps", None, types={L.step_limit: 1}, limits=[2]),
    "steps-model-calls": lambda: _sit("budget:steps", "search", types={L.model_call_limit: 1}, limits=[6]),
    "steps-no-limit-successes": lambda: _sit("budget:steps", None, types={L.tool_call_limit: 1},
                                             successes=[_run(5, True, _calls(4)), _run(6, True, _calls(7))]),
    "steps-no-limit-failures": lambda: _sit(
        "budget:steps", "search", types={L.tool_call_limit: 1},
        failures=[_run(1, False, _calls(5) + _calls(5)), _run(2, False, _calls(3)), _run(3, False, _calls(4))]),
    "steps-no-types": lambda: _sit("budget:steps", None, limits=[7]),
    "steps-no-evidence-calls": lambda: _sit("budget:steps", None, types={L.tool_call_limit: 1},
                                            failures=[_run(1, False)]),
    "tokens": lambda: _sit("budget:tokens", "fetch_page", types={L.token_budget: 1}, limits=[4000],
                           successes=[_run(5, True, _calls(3, "fetch_page"))]),
    "tokens-context": lambda: _sit("budget:tokens", None, types={L.context_overflow: 1}),
    "time": lambda: _sit("budget:time", None, types={L.time_budget: 1}),
    "time-tool": lambda: _sit("budget:time", "wait_for", types={L.time_budget: 1}, limits=[30]),
}


def _observed(sit: Situation) -> dict:
    return {"lessons": [{"kind": x.kind.value if hasattr(x.kind, "value") else x.kind,
                         **x.model_dump(mode="json", exclude_defaults=True)} for x in situation_lessons(sit)],
            "name": guard_name(sit), "describe": sit.describe(),
            "content": guard_content(sit).model_dump(mode="json", exclude={"lessons"})}


@pytest.mark.parametrize("case", list(CASES))
def test_a_limit_situation_teaches_what_it_always_taught(case):
    assert _observed(CASES[case]()) == EXPECTED[case]


def test_every_case_is_pinned():
    assert set(CASES) == set(EXPECTED)


EXPECTED = {'missing_tool': {'lessons': [{'kind': 'missing_tool', 'tool': 'open_window'}],
                  'name': 'when-open-window-is-unavailable',
                  'describe': '`open_window` was unavailable in 2 failed run(s)',
                  'content': {'name': 'when-open-window-is-unavailable',
                              'description': 'When a request needs `open_window` (open window) and that tool may '
                                             'not be among your tools. Seen with requests like "book a room for '
                                             '{date}".',
                              'body': '## When a tool is missing or falls short\n'
                                      '- If `open_window` is not among your tools, do not call it: do the rest of '
                                      'the request, then tell the user that `open_window` is unavailable.\n'
                                      '- Do not claim the step was done and do not substitute a different tool '
                                      'for it; name the missing capability as the blocker.',
                              'kind': 'guard',
                              'tools': ['open_window'],
                              'tags': ['limit', 'missing_tool', 'capability'],
                              'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'missing_parameter': {'lessons': [{'kind': 'missing_parameter', 'tool': 'set_climate', 'parameter': 'fan_speed'}],
                       'name': 'when-set-climate-has-no-fan-speed',
                       'describe': '`set_climate` has no `fan_speed` parameter in 2 failed run(s)',
                       'content': {'name': 'when-set-climate-has-no-fan-speed',
                                   'description': 'When a request asks `set_climate` (set climate) for '
                                                  '`fan_speed`, which it may have no parameter for. Seen with '
                                                  'requests like "book a room for {date}".',
                                   'body': '## When a tool is missing or falls short\n'
                                           '- If `set_climate` has no `fan_speed` parameter, do not pass it: do '
                                           'the rest of the request, then tell the user that `fan_speed` cannot '
                                           'be set.\n'
                                           '- Do not claim that part was done; name the missing parameter as the '
                                           'blocker.',
                                   'kind': 'guard',
                                   'tools': ['set_climate'],
                                   'tags': ['limit', 'missing_parameter', 'capability'],
                                   'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'missing_parameter-no-detail': {'lessons': [{'kind': 'ask_for', 'tool': 'setClimate'}],
                                 'name': 'check-set-climate-arguments',
                                 'describe': '`setClimate` has no parameter for an argument given in 2 failed '
                                             'run(s)',
                                 'content': {'name': 'check-set-climate-arguments',
                                             'description': 'When a request asks `setClimate` (set climate) for a '
                                                            'setting, which it may have no parameter for. Seen '
                                                            'with requests like "book a room for {date}".',
                                             'body': '## Checks\n'
                                                     '- If the request does not state every value `setClimate` '
                                                     'needs unambiguously, ask the user instead of guessing.',
                                             'kind': 'guard',
                                             'tools': ['setClimate'],
                                             'tags': ['limit', 'missing_parameter', 'capability'],
                                             'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'invalid_tool_args': {'lessons': [{'kind': 'ask_for', 'tool': 'book_flight', 'parameter': 'date'}],
                       'name': 'ask-for-date-before-book-flight',
                       'describe': '`book_flight` could not take the arguments given (`date`) in 2 failed run(s)',
                       'content': {'name': 'ask-for-date-before-book-flight',
                                   'description': 'When calling `book_flight` (book flight), which needs `date`. '
                                                  'Seen with requests like "book a room for {date}".',
                                   'body': '## Checks\n'
                                           '- If the request does not state `date` for `book_flight` '
                                           'unambiguously, ask the user for `date` instead of guessing.',
                                   'kind': 'guard',
                                   'tools': ['book_flight'],
                                   'tags': ['limit', 'invalid_tool_args', 'capability'],
                                   'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'invalid_tool_args-no-detail': {'lessons': [{'kind': 'ask_for', 'tool': 'book_flight'}],
                                 'name': 'check-book-flight-arguments',
                                 'describe': '`book_flight` could not take the arguments given in 2 failed run(s)',
                                 'content': {'name': 'check-book-flight-arguments',
                                             'description': 'When calling `book_flight` (book flight). Seen with '
                                                            'requests like "book a room for {date}".',
                                             'body': '## Checks\n'
                                                     '- If the request does not state every value `book_flight` '
                                                     'needs unambiguously, ask the user instead of guessing.',
                                             'kind': 'guard',
                                             'tools': ['book_flight'],
                                             'tags': ['limit', 'invalid_tool_args', 'capability'],
                                             'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'unknown_field': {'lessons': [{'kind': 'unknown_field', 'tool': 'track_order', 'field': 'eta'}],
                   'name': 'when-track-order-eta-is-unknown',
                   'describe': '`track_order` returned `eta` as unknown in 2 failed run(s)',
                   'content': {'name': 'when-track-order-eta-is-unknown',
                               'description': 'When `track_order` (track order) may return `eta` as unknown or '
                                              'null. Seen with requests like "book a room for {date}".',
                               'body': '## When a tool is missing or falls short\n'
                                       '- If `track_order` returns `eta` as unknown or null, do not invent a '
                                       'value: tell the user that `eta` is unknown.\n'
                                       '- Answer the parts that are known and name the unknown field as the '
                                       'blocker.',
                               'kind': 'guard',
                               'tools': ['track_order'],
                               'tags': ['limit', 'unknown_field', 'capability'],
                               'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'unknown_field-no-detail': {'lessons': [{'kind': 'unknown_field'}],
                             'name': 'when-track-order-returns-unknown',
                             'describe': '`track_order` returned `None` as unknown in 2 failed run(s)',
                             'content': {'name': 'when-track-order-returns-unknown',
                                         'description': 'When `track_order` (track order) may return a field as '
                                                        'unknown or null. Seen with requests like "book a room '
                                                        'for {date}".',
                                         'body': '## When a tool is missing or falls short\n'
                                                 '- If a tool returns a field as unknown or null, do not invent a '
                                                 'value: tell the user which field is unknown.\n'
                                                 '- Answer the parts that are known and name the unknown field as '
                                                 'the blocker.',
                                         'kind': 'guard',
                                         'tools': ['track_order'],
                                         'tags': ['limit', 'unknown_field', 'capability'],
                                         'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'tool_error': {'lessons': [{'kind': 'tool_error', 'tool': 'hold_table'}],
                'name': 'when-hold-table-fails',
                'describe': '`hold_table` returned errors in 1 failed run(s)',
                'content': {'name': 'when-hold-table-fails',
                            'description': 'When `hold_table` (hold table) returns an error.',
                            'body': '## When a tool is missing or falls short\n'
                                    '- If `hold_table` returns an error, retry at most once with corrected '
                                    'arguments; if it fails again, do the rest of the request and tell the user '
                                    'that `hold_table` failed.',
                            'kind': 'guard',
                            'tools': ['hold_table'],
                            'tags': ['limit', 'tool_error', 'capability'],
                            'toolset': []}},
 'policy_refusal': {'lessons': [{'kind': 'policy', 'tool': 'refund'}],
                    'name': 'check-policy-before-refund',
                    'describe': 'a policy refused `refund` in 2 failed run(s), 1 success(es) that coped or came '
                                'close',
                    'content': {'name': 'check-policy-before-refund',
                                'description': 'When a request may not be allowed by policy, before calling '
                                               '`refund`. Seen with requests like "book a room for {date}".',
                                'body': '## Checks\n'
                                        '- Before calling `refund`, check that policy allows it for this request; '
                                        'if it does not, decline that part, state the rule in one sentence and do '
                                        'the rest.',
                                'kind': 'guard',
                                'tools': ['refund'],
                                'tags': ['limit', 'policy_refusal', 'capability'],
                                'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'policy_refusal-no-tool': {'lessons': [{'kind': 'policy'}],
                            'name': 'check-policy-first',
                            'describe': 'a policy refused the request in 2 failed run(s)',
                            'content': {'name': 'check-policy-first',
                                        'description': 'When a request may not be allowed by policy. Seen with '
                                                       'requests like "book a room for {date}".',
                                        'body': '## Checks\n'
                                                '- Before calling an action, check that policy allows it for this '
                                                'request; if it does not, decline that part, state the rule in '
                                                'one sentence and do the rest.',
                                        'kind': 'guard',
                                        'tools': [],
                                        'tags': ['limit', 'policy_refusal', 'capability'],
                                        'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'wrong_tool_name': {'lessons': [{'kind': 'wrong_tool_name', 'tool': 'create_event'}],
                     'name': 'call-create-event-by-its-exact-name',
                     'describe': '`create_event` was called by another name (`add_event`, `new_event`) in 2 '
                                 'failed run(s)',
                     'content': {'name': 'call-create-event-by-its-exact-name',
                                 'description': 'When a request needs `create_event` (create event): call it by '
                                                'its exact name. Seen with requests like "book a room for '
                                                '{date}".',
                                 'body': '## Common mistakes\n'
                                         '- To do this, call `create_event` by exactly that name: a tool name '
                                         'that is not among your tools fails.',
                                 'kind': 'pitfall',
                                 'tools': ['create_event'],
                                 'tags': ['limit', 'wrong_tool_name', 'capability'],
                                 'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'check_first': {'lessons': [{'kind': 'check_first', 'check': 'get_room_status', 'tool': 'book_room'}],
                 'name': 'call-get-room-status-before-book-room',
                 'describe': '`book_room` was refused with a message naming `get_room_status` to call first in 2 '
                             'failed run(s)',
                 'content': {'name': 'call-get-room-status-before-book-room',
                             'description': 'When a request needs `book_room` (book room), which needs '
                                            '`get_room_status` called first. Seen with requests like "book a room '
                                            'for {date}".',
                             'body': '## Checks\n- Always call `get_room_status` before `book_room`.',
                             'kind': 'policy',
                             'tools': ['book_room'],
                             'tags': ['limit', 'check_first', 'capability'],
                             'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'mv-one-word-tool': {'lessons': [{'kind': 'tool_error', 'tool': 'mv'}],
                      'name': 'when-mv-fails',
                      'describe': '`mv` returned errors in 2 failed run(s)',
                      'content': {'name': 'when-mv-fails',
                                  'description': 'When `mv` returns an error. Seen with requests like "book a '
                                                 'room for {date}".',
                                  'body': '## When a tool is missing or falls short\n'
                                          '- If `mv` returns an error, retry at most once with corrected '
                                          'arguments; if it fails again, do the rest of the request and tell the '
                                          'user that `mv` failed.',
                                  'kind': 'guard',
                                  'tools': ['mv'],
                                  'tags': ['limit', 'tool_error', 'capability'],
                                  'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'odd-tool-name': {'lessons': [{'kind': 'missing_tool', 'tool': 'open window!'}],
                   'name': 'when-open-window-is-unavailable',
                   'describe': '`open window!` was unavailable in 2 failed run(s)',
                   'content': {'name': 'when-open-window-is-unavailable',
                               'description': 'When a request needs `open window!` (open window) and that tool '
                                              'may not be among your tools. Seen with requests like "book a room '
                                              'for {date}".',
                               'body': '## When a tool is missing or falls short\n'
                                       '- If `open window!` is not among your tools, do not call it: do the rest '
                                       'of the request, then tell the user that `open window!` is unavailable.\n'
                                       '- Do not claim the step was done and do not substitute a different tool '
                                       'for it; name the missing capability as the blocker.',
                               'kind': 'guard',
                               'tools': [],
                               'tags': ['limit', 'missing_tool', 'capability'],
                               'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'steps-tool-calls-limit-comfortable': {'lessons': [{'kind': 'budget', 'budget': 3, 'tool': 'search'}],
                                        'name': 'finish-within-steps-budget-stop-repeating-search',
                                        'describe': 'the steps budget ran out while repeating `search` in 2 '
                                                    'failed run(s), 2 success(es) that coped or came close',
                                        'content': {'name': 'finish-within-steps-budget-stop-repeating-search',
                                                    'description': 'When a task risks running out of its steps '
                                                                   'budget, especially by repeating `search`.',
                                                    'body': '## Budget\n'
                                                            '- Finish within 3 tool calls: never repeat a call '
                                                            'with the same arguments, and answer as soon as the '
                                                            'needed facts are known. Do not keep calling '
                                                            '`search`: if two calls did not find it, a third will '
                                                            'not; answer with what is known and say what is still '
                                                            'missing.',
                                                    'kind': 'guard',
                                                    'tools': ['search'],
                                                    'tags': ['limit', 'budget-steps', 'budget'],
                                                    'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'steps-tool-calls-limit-only-close': {'lessons': [{'kind': 'budget', 'budget': 10, 'tool': 'search'}],
                                       'name': 'finish-within-steps-budget-stop-repeating-search',
                                       'describe': 'the steps budget ran out while repeating `search` in 2 failed '
                                                   'run(s), 1 success(es) that coped or came close',
                                       'content': {'name': 'finish-within-steps-budget-stop-repeating-search',
                                                   'description': 'When a task risks running out of its steps '
                                                                  'budget, especially by repeating `search`. Seen '
                                                                  'with requests like "book a room for {date}".',
                                                   'body': '## Budget\n'
                                                           '- Finish within 10 tool calls: never repeat a call '
                                                           'with the same arguments, and answer as soon as the '
                                                           'needed facts are known. Do not keep calling `search`: '
                                                           'if two calls did not find it, a third will not; '
                                                           'answer with what is known and say what is still '
                                                           'missing.',
                                                   'kind': 'guard',
                                                   'tools': ['search'],
                                                   'tags': ['limit', 'budget-steps', 'budget'],
                                                   'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'steps-recursion': {'lessons': [{'kind': 'budget', 'budget': 12}],
                     'name': 'finish-within-steps-budget',
                     'describe': 'the steps budget ran out in 2 failed run(s)',
                     'content': {'name': 'finish-within-steps-budget',
                                 'description': 'When a task risks running out of its steps budget. Seen with '
                                                'requests like "book a room for {date}".',
                                 'body': '## Budget\n'
                                         '- Finish within 12 tool calls: never repeat a call with the same '
                                         'arguments, and answer as soon as the needed facts are known.',
                                 'kind': 'guard',
                                 'tools': [],
                                 'tags': ['limit', 'budget-steps', 'budget'],
                                 'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'steps-step-limit-tiny': {'lessons': [{'kind': 'budget', 'budget': 1}],
                           'name': 'finish-within-steps-budget',
                           'describe': 'the steps budget ran out in 2 failed run(s)',
                           'content': {'name': 'finish-within-steps-budget',
                                       'description': 'When a task risks running out of its steps budget. Seen '
                                                      'with requests like "book a room for {date}".',
                                       'body': '## Budget\n'
                                               '- Finish within 1 tool calls: never repeat a call with the same '
                                               'arguments, and answer as soon as the needed facts are known.',
                                       'kind': 'guard',
                                       'tools': [],
                                       'tags': ['limit', 'budget-steps', 'budget'],
                                       'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'steps-model-calls': {'lessons': [{'kind': 'budget', 'budget': 5, 'tool': 'search'}],
                       'name': 'finish-within-steps-budget-stop-repeating-search',
                       'describe': 'the steps budget ran out while repeating `search` in 2 failed run(s)',
                       'content': {'name': 'finish-within-steps-budget-stop-repeating-search',
                                   'description': 'When a task risks running out of its steps budget, especially '
                                                  'by repeating `search`. Seen with requests like "book a room '
                                                  'for {date}".',
                                   'body': '## Budget\n'
                                           '- Finish within 5 tool calls: never repeat a call with the same '
                                           'arguments, and answer as soon as the needed facts are known. Do not '
                                           'keep calling `search`: if two calls did not find it, a third will '
                                           'not; answer with what is known and say what is still missing.',
                                   'kind': 'guard',
                                   'tools': ['search'],
                                   'tags': ['limit', 'budget-steps', 'budget'],
                                   'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'steps-no-limit-successes': {'lessons': [{'kind': 'budget', 'budget': 7}],
                              'name': 'finish-within-steps-budget',
                              'describe': 'the steps budget ran out in 2 failed run(s), 2 success(es) that coped '
                                          'or came close',
                              'content': {'name': 'finish-within-steps-budget',
                                          'description': 'When a task risks running out of its steps budget.',
                                          'body': '## Budget\n'
                                                  '- Finish within 7 tool calls: never repeat a call with the '
                                                  'same arguments, and answer as soon as the needed facts are '
                                                  'known.',
                                          'kind': 'guard',
                                          'tools': [],
                                          'tags': ['limit', 'budget-steps', 'budget'],
                                          'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'steps-no-limit-failures': {'lessons': [{'kind': 'budget', 'budget': 4, 'tool': 'search'}],
                             'name': 'finish-within-steps-budget-stop-repeating-search',
                             'describe': 'the steps budget ran out while repeating `search` in 3 failed run(s)',
                             'content': {'name': 'finish-within-steps-budget-stop-repeating-search',
                                         'description': 'When a task risks running out of its steps budget, '
                                                        'especially by repeating `search`.',
                                         'body': '## Budget\n'
                                                 '- Finish within 4 tool calls: never repeat a call with the same '
                                                 'arguments, and answer as soon as the needed facts are known. Do '
                                                 'not keep calling `search`: if two calls did not find it, a '
                                                 'third will not; answer with what is known and say what is still '
                                                 'missing.',
                                         'kind': 'guard',
                                         'tools': ['search'],
                                         'tags': ['limit', 'budget-steps', 'budget'],
                                         'toolset': []}},
 'steps-no-types': {'lessons': [{'kind': 'budget', 'budget': 7}],
                    'name': 'finish-within-steps-budget',
                    'describe': 'the steps budget ran out in 2 failed run(s)',
                    'content': {'name': 'finish-within-steps-budget',
                                'description': 'When a task risks running out of its steps budget. Seen with '
                                               'requests like "book a room for {date}".',
                                'body': '## Budget\n'
                                        '- Finish within 7 tool calls: never repeat a call with the same '
                                        'arguments, and answer as soon as the needed facts are known.',
                                'kind': 'guard',
                                'tools': [],
                                'tags': ['limit', 'budget-steps', 'budget'],
                                'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'steps-no-evidence-calls': {'lessons': [{'kind': 'budget', 'budget': 2}],
                             'name': 'finish-within-steps-budget',
                             'describe': 'the steps budget ran out in 1 failed run(s)',
                             'content': {'name': 'finish-within-steps-budget',
                                         'description': 'When a task risks running out of its steps budget.',
                                         'body': '## Budget\n'
                                                 '- Finish within 2 tool calls: never repeat a call with the same '
                                                 'arguments, and answer as soon as the needed facts are known.',
                                         'kind': 'guard',
                                         'tools': [],
                                         'tags': ['limit', 'budget-steps', 'budget'],
                                         'toolset': []}},
 'tokens': {'lessons': [{'kind': 'budget', 'budget': 3, 'tool': 'fetch_page'},
                        {'kind': 'guidance',
                         'text': 'Request only the fields you need and summarise long tool outputs instead of '
                                 'quoting them.'}],
            'name': 'finish-within-tokens-budget-stop-repeating-fetch-page',
            'describe': 'the tokens budget ran out while repeating `fetch_page` in 2 failed run(s), 1 success(es) '
                        'that coped or came close',
            'content': {'name': 'finish-within-tokens-budget-stop-repeating-fetch-page',
                        'description': 'When a task risks running out of its tokens budget, especially by '
                                       'repeating `fetch_page` (fetch page). Seen with requests like "book a room '
                                       'for {date}".',
                        'body': '## Budget\n'
                                '- Finish within 3 tool calls: never repeat a call with the same arguments, and '
                                'answer as soon as the needed facts are known. Do not keep calling `fetch_page`: '
                                'if two calls did not find it, a third will not; answer with what is known and '
                                'say what is still missing.\n'
                                '\n'
                                '## Guidance\n'
                                '- Request only the fields you need and summarise long tool outputs instead of '
                                'quoting them.',
                        'kind': 'guard',
                        'tools': ['fetch_page'],
                        'tags': ['limit', 'budget-tokens', 'budget'],
                        'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'tokens-context': {'lessons': [{'kind': 'budget', 'budget': 2},
                                {'kind': 'guidance',
                                 'text': 'Request only the fields you need and summarise long tool outputs '
                                         'instead of quoting them.'}],
                    'name': 'finish-within-tokens-budget',
                    'describe': 'the tokens budget ran out in 2 failed run(s)',
                    'content': {'name': 'finish-within-tokens-budget',
                                'description': 'When a task risks running out of its tokens budget. Seen with '
                                               'requests like "book a room for {date}".',
                                'body': '## Budget\n'
                                        '- Finish within 2 tool calls: never repeat a call with the same '
                                        'arguments, and answer as soon as the needed facts are known.\n'
                                        '\n'
                                        '## Guidance\n'
                                        '- Request only the fields you need and summarise long tool outputs '
                                        'instead of quoting them.',
                                'kind': 'guard',
                                'tools': [],
                                'tags': ['limit', 'budget-tokens', 'budget'],
                                'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'time': {'lessons': [{'kind': 'budget', 'budget': 2},
                      {'kind': 'guidance',
                       'text': 'Prefer one broad call over many narrow ones; do not wait on slow calls that are '
                               'not needed for the answer.'}],
          'name': 'finish-within-time-budget',
          'describe': 'the time budget ran out in 2 failed run(s)',
          'content': {'name': 'finish-within-time-budget',
                      'description': 'When a task risks running out of its time budget. Seen with requests like '
                                     '"book a room for {date}".',
                      'body': '## Budget\n'
                              '- Finish within 2 tool calls: never repeat a call with the same arguments, and '
                              'answer as soon as the needed facts are known.\n'
                              '\n'
                              '## Guidance\n'
                              '- Prefer one broad call over many narrow ones; do not wait on slow calls that are '
                              'not needed for the answer.',
                      'kind': 'guard',
                      'tools': [],
                      'tags': ['limit', 'budget-time', 'budget'],
                      'toolset': ['a_tool', 'b_tool', 'c_tool']}},
 'time-tool': {'lessons': [{'kind': 'budget', 'budget': 2, 'tool': 'wait_for'},
                           {'kind': 'guidance',
                            'text': 'Prefer one broad call over many narrow ones; do not wait on slow calls that '
                                    'are not needed for the answer.'}],
               'name': 'finish-within-time-budget-stop-repeating-wait-for',
               'describe': 'the time budget ran out while repeating `wait_for` in 2 failed run(s)',
               'content': {'name': 'finish-within-time-budget-stop-repeating-wait-for',
                           'description': 'When a task risks running out of its time budget, especially by '
                                          'repeating `wait_for` (wait for). Seen with requests like "book a room '
                                          'for {date}".',
                           'body': '## Budget\n'
                                   '- Finish within 2 tool calls: never repeat a call with the same arguments, '
                                   'and answer as soon as the needed facts are known. Do not keep calling '
                                   '`wait_for`: if two calls did not find it, a third will not; answer with what '
                                   'is known and say what is still missing.\n'
                                   '\n'
                                   '## Guidance\n'
                                   '- Prefer one broad call over many narrow ones; do not wait on slow calls that '
                                   'are not needed for the answer.',
                           'kind': 'guard',
                           'tools': ['wait_for'],
                           'tags': ['limit', 'budget-time', 'budget'],
                           'toolset': ['a_tool', 'b_tool', 'c_tool']}}}
