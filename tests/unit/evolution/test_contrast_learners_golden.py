"""What the rule distiller learns from a cluster's successes and failures, pinned byte for byte:
the skill ``induce`` proposes (its lessons, name, description, body, reason and evidence) and every
``(lesson, why)`` that ``mistakes`` contrasts, in order, for procedures with checks, questions and
pitfalls (by tool and, for a one-tool agent, by step), answer units, stated times and dates with
``learn_stated_values`` on and off, and small talk (``no_tool``); plus an edit of a used skill
(``revise``). The values were captured before the answer-unit and stated-value learners moved
from evolution into their kinds' modules; they must not change.

The runs are shaped like the other evolution tests' (``test_evolution_support``, the trains and
balances of ``test_success_contrast``, the pickups of ``test_stated_times``, the courts of
``test_stated_dates``, the lights of ``adapters/test_real_mistakes``, the small talk of
``test_small_talk_support``), copied here so that this file pins them as they are.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest

from skillbank.evolution._cluster import Cluster
from skillbank.evolution.config import EvolutionConfig
from skillbank.evolution._distiller import SkillEvidence
from skillbank.evolution._evidence import Run, to_run
from skillbank.evolution.rule import RuleDistiller, consensus, mistakes
from skillbank.lessons import Guidance
from test_evolution_support import refund, traj

MONDAY = dt.date(2027, 3, 8)
NAMES = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Fatima"]


def _runs(*trajectories) -> list[Run]:
    return [to_run(t) for t in trajectories]


# -- the runs ------------------------------------------------------------------------------------


def _refund_extra(i: int) -> Run:
    """A refund that failed: the order looked up three times, then a tool no success called."""
    order = f"{4000 + i}"
    calls = [("find_order", {"order_id": order}, '{"status": "delivered"}')] * 3 + [
        ("check_refund_policy", {"order_id": order}, '{"eligible": true}'),
        ("email_customer", {"order_id": order}, "sent"),
        ("issue_refund", {"order_id": order, "amount": 20 + i + 0.5}, "refund issued")]
    return to_run(traj(f"Refund order {order} for {NAMES[i % 6]}, it arrived damaged.", calls, success=False,
                       answer="Refund issued.", task_id=f"retail-refund-{i:04d}"))


def _meeting(i: int, *, success: bool, asked: bool) -> Run:
    name = NAMES[i % 6]
    calls = [("find_contact", {"name": name}, json.dumps({"email": f"{name.lower()}@example.org"})),
             ("create_event", {"attendee": f"{name.lower()}@example.org", "title": "sync"}, "created")]
    run = to_run(traj(f"Set up a meeting with {name} next week.", calls, success=success,
                      answer="The meeting is booked.", task_id=f"meet-{i}"))
    return dataclasses.replace(run, questions=(0,)) if asked else run


def _lights(on_room, off_room, pct, *, success, off_args=None, off_error=None, task_id) -> Run:
    off = off_args or {"room": off_room, "on": False}
    return to_run(traj(f"Turn on the {on_room} light at {pct}% and turn off the {off_room} light.",
                       [("set_light", {"room": on_room, "on": True, "brightness": pct}, "ok"),
                        ("set_light", off, "error" if off_error else "ok", *([off_error] if off_error else []))],
                       success=success, task_id=task_id))


LIGHTS_OK = (("kitchen", "hall", 60), ("office", "porch", 40), ("garage", "attic", 70))
LIGHTS_BAD = (("den", "bath", 30), ("loft", "yard", 50))
STATIONS = [("Hamburg", "Cologne"), ("Frankfurt", "Leipzig"), ("Berlin", "Munich"), ("Bremen", "Dresden")]


def _first_train(i: int, *, success: bool) -> Run:
    origin, destination = STATIONS[i % len(STATIONS)]
    task = f"When is the first train from {origin} to {destination} tomorrow?"
    if success:
        calls = [("find_trains", {"origin": origin, "destination": destination, "date": "2027-03-09"},
                  '{"trains": [{"train_id": "IC %d", "departs": "06:%02d"}]}' % (100 + i, 10 + i))]
        answer = f"The first train leaves at 06:{10 + i:02d}."
    else:
        calls = []
        answer = (f"To find the earliest train from {origin} to {destination} tomorrow, you can call "
                  "the `find_trains` function with the origin, destination and date.")
    return to_run(traj(task, calls, success=success, answer=answer, task_id=f"steady.trains.first#{i}",
                       task_type="first-train"))


def _balance(i: int, *, success: bool, raw_in_success: bool = False) -> Run:
    cents = 24175 + 1010 * i
    task = f"What is the balance of my {['current', 'holiday', 'savings'][i % 3]} account in euros?"
    calls = [("get_accounts", {}, '{"accounts": [{"account_id": "AC-%d", "name": "current", '
              '"balance_cents": %d, "open": true}]}' % (300 + i, cents))]
    if success:
        answer = f"Your balance is {cents // 100}.{cents % 100:02d} euros."
        if raw_in_success:
            answer += f" ({cents} cents)"
    else:
        answer = f"Your current account balance is ${cents:,}."
    return to_run(traj(task, calls, success=success, answer=answer, task_id=f"steady.money.balance#{i}",
                       task_type="balance"))


def _visibility(i: int, *, success: bool) -> Run:
    metres = [15600, 2300, 8400, 12100, 4700, 9900][i % 6]
    city = ["Vienna", "Prague", "Oslo", "Lyon", "Turin", "Bergen"][i % 6]
    calls = [("current_conditions", {"city": city},
              '{"city": "%s", "condition": "light rain", "visibility_m": %d}' % (city, metres))]
    answer = (f"The visibility in {city} right now is {metres / 1000:g} km." if success
              else f"The visibility in {city} now is {metres} metres.")
    return to_run(traj(f"What's the visibility in {city} right now, in km?", calls, success=success,
                       answer=answer, task_id=f"steady.weather.visibility#{i}", task_type="visibility"))


PICKUPS = [("half past four this afternoon", "16:30"), ("a quarter to six this evening", "17:45"),
           ("ten past five this afternoon", "17:10")]


def _pickup(i: int, *, passed: str | None = None, success: bool) -> Run:
    words, time = PICKUPS[i % len(PICKUPS)]
    order = f"PO-{40000 + i}"
    given = passed or time
    calls = [("set_pickup_time", {"order_id": order, "time": given}, json.dumps({"order_id": order, "pickup": given}))]
    return to_run(traj(f"Please note that I'll pick up {order} at {words}.", calls, success=success,
                       answer=f"Noted: {order} at {given}.", task_id=f"steady.pharmacy.pickup_time#{i}",
                       task_type="pickup"))


COURT = "Reserve a squash court for me the day after tomorrow at 18:00."


def _court(i: int, *, passed: str = "2027-03-10", success: bool, today: dt.date | None = MONDAY,
           price: bool = False, raw: bool = False, time: str = "18:00") -> Run:
    cents = 2450 + 100 * i
    result = {"court": 3, "date": passed, "time": time, **({"price_cents": cents} if price else {})}
    answer = f"Court 3 is yours on {passed}."
    if price:
        answer += f" It costs {cents} cents." if raw else f" It costs {cents / 100:.2f} euros."
    run = traj(COURT, [("reserve_court", {"date": passed, "time": time}, json.dumps(result))], success=success,
               answer=answer, task_id=f"steady.gym.court_day_after#{i}", task_type="court")
    return to_run(run.model_copy(update={"today": today}))


def _chat(text: str, i: int, *, called: str | None) -> Run:
    calls = [(called, {"bed": "1"}, '{"moisture": 40}')] if called else []
    return to_run(traj(text, calls, success=called is None, answer="Good morning to you too!" if called is None else "",
                       task_id=f"chat-{i}"))


# -- the clusters: (runs, config) ----------------------------------------------------------------

ON = {"learn_stated_values": True}

CASES = {
    "refund-check-first": lambda: (
        _runs(*[refund(i) for i in range(3)], *[refund(i, success=False, skip_check=True) for i in range(3, 5)]), {}),
    "refund-extra-call-and-repeats": lambda: (
        _runs(*[refund(i) for i in range(4)]) + [_refund_extra(i) for i in range(4, 7)], {}),
    "refund-few-bullets": lambda: (
        _runs(*[refund(i) for i in range(3)], refund(3, success=False, skip_check=True))
        + [_refund_extra(i) for i in range(4, 6)], {"max_bullets": 1}),
    "meeting-ask-for": lambda: (
        [_meeting(i, success=True, asked=True) for i in range(3)]
        + [_meeting(i, success=False, asked=False) for i in range(3, 5)], {}),
    "meeting-ask-for-one-asked": lambda: (
        [_meeting(0, success=True, asked=True), _meeting(1, success=True, asked=False),
         _meeting(2, success=True, asked=False), _meeting(3, success=False, asked=False)], {}),
    "lights-call-that-errs": lambda: (
        [_lights(a, b, p, success=True, task_id=f"ok-{a}") for a, b, p in LIGHTS_OK]
        + [_lights(a, b, p, success=False, off_args={"room": b, "on": False, "brightness": 0},
                   off_error="brightness must be between 1 and 100", task_id=f"bad-{a}") for a, b, p in LIGHTS_BAD],
        {}),
    "lights-call-that-worked": lambda: (
        [_lights(a, b, p, success=True, task_id=f"ok-{a}") for a, b, p in LIGHTS_OK]
        + [_lights(a, b, p, success=False, off_args={"room": a, "on": False, "brightness": 0}, task_id=f"bad-{a}")
           for a, b, p in LIGHTS_BAD], {}),
    "first-train-described": lambda: (
        [_first_train(i, success=True) for i in range(3)] + [_first_train(i, success=False) for i in range(3, 6)],
        {"min_procedure_steps": 1}),
    "first-train-pitfalls": lambda: (
        [_first_train(i, success=True) for i in range(3)] + [_first_train(i, success=False) for i in range(3, 6)], {}),
    "balance-answer-unit": lambda: (
        [_balance(i, success=True) for i in range(3)] + [_balance(i, success=False) for i in range(3, 6)], {}),
    "balance-raw-in-success": lambda: (
        [_balance(i, success=True, raw_in_success=True) for i in range(3)]
        + [_balance(i, success=False) for i in range(3, 6)], {}),
    "visibility-answer-unit": lambda: (
        [_visibility(i, success=True) for i in (0, 2, 3)] + [_visibility(i, success=False) for i in (1, 4)], {}),
    "pickup-times-off": lambda: (_pickups(), {}),
    "pickup-times-on": lambda: (_pickups(), ON),
    "pickup-times-said-differently-on": lambda: (
        [_pickup(i, success=True) for i in range(3)]
        + [_pickup(1, passed="18:30", success=False), _pickup(1, passed="19:30", success=False)], ON),
    "pickup-times-a-success-passed-another-on": lambda: (
        [_pickup(0, success=True), _pickup(1, success=True), _pickup(2, passed="09:00", success=True),
         _pickup(1, passed="18:30", success=False)], ON),
    "court-dates-off": lambda: (_courts(), {}),
    "court-dates-on": lambda: (_courts(), ON),
    "court-dates-without-today-on": lambda: (
        [_court(0, success=True, today=None), _court(1, success=True, today=None),
         _court(2, passed="2027-03-09", success=False, today=None)], ON),
    "court-dates-and-price-off": lambda: (_courts(price=True), {}),
    "court-dates-and-price-on": lambda: (_courts(price=True), ON),
    "court-dates-and-times-off": lambda: (_courts(times=True), {}),
    "court-dates-and-times-on": lambda: (_courts(times=True), ON),
    "court-dates-and-price-one-bullet-on": lambda: (_courts(price=True), {**ON, "max_bullets": 1}),
    "small-talk-two-wordings": lambda: (
        [_chat("Morning! Nice weather for it.", 0, called=None),
         _chat("Morning! Nice weather for it.", 1, called="get_soil_moisture"),
         _chat("Hey there, how is your day going?", 2, called=None),
         _chat("Hey there, how is your day going?", 3, called="water_bed")], {}),
    "small-talk-one-wording": lambda: (
        [_chat("Thank you so much, that's all I needed.", i, called=None if i < 2 else "water_bed")
         for i in range(5)], {}),
    "small-talk-one-caller": lambda: (
        [_chat("Morning! Nice weather for it.", 0, called=None), _chat("Morning! Nice weather for it.", 1, called=None),
         _chat("Morning! Nice weather for it.", 2, called="water_bed")], {}),
}


def _pickups() -> list[Run]:
    return [_pickup(0, success=True), _pickup(0, success=True), _pickup(0, success=True),
            _pickup(0, passed="14:30", success=False), _pickup(0, passed="18:30", success=False)]


def _courts(price: bool = False, times: bool = False) -> list[Run]:
    """Three successes that passed the said date, two failures that passed another (and, with
    ``times``, another time than the said 18:00)."""
    return [_court(0, success=True, price=price), _court(1, success=True, price=price),
            _court(2, success=True, price=price),
            _court(3, passed="2027-03-09", success=False, price=price, raw=True, time="19:00" if times else "18:00"),
            _court(4, passed="2027-03-19", success=False, price=price, raw=True, time="20:00" if times else "18:00")]


# -- what is observed --------------------------------------------------------------------------


def _lesson(x) -> dict:
    return {"kind": x.kind.value if hasattr(x.kind, "value") else x.kind,
            **x.model_dump(mode="json", exclude_defaults=True)}


def _proposal(p, index: dict[str, int]) -> dict:
    return {"kind": p.kind.value, "origin": p.origin, "reason": p.reason,
            "evidence": [index[i] for i in p.evidence],
            "lessons": [_lesson(x) for x in p.content.lessons],
            "content": p.content.model_dump(mode="json", exclude={"lessons"})}


def _observed(runs: list[Run], overrides: dict) -> dict:
    config = EvolutionConfig(**overrides)
    index = {r.id: n for n, r in enumerate(runs)}
    cluster = Cluster(key="golden", runs=runs)
    ok, bad = cluster.successes, cluster.failures
    skel, support = consensus(ok)
    return {
        "induce": [_proposal(p, index) for p in RuleDistiller().induce(cluster, config)],
        "mistakes": [{"lesson": _lesson(x), "why": why}
                     for x, why in mistakes(support, bad, skel, limit=99, min_support=config.min_support,
                                            stated_values=config.learn_stated_values)],
    }


@pytest.mark.parametrize("case", list(CASES))
def test_a_cluster_teaches_what_it_always_taught(case):
    runs, overrides = CASES[case]()
    assert _observed(runs, overrides) == EXPECTED[case]


def test_every_case_is_pinned():
    assert set(CASES) == set(EXPECTED)


@pytest.mark.parametrize("stated", [False, True])
def test_an_edit_of_a_used_skill_adds_what_it_always_added(bank, stated):
    skill = bank.add_skill(name="court-bookings", description="Reserve a squash court on the day the user said.",
                           kind="procedure", tools=["reserve_court"], lessons=(Guidance(text="Be brief."),))
    runs = _courts(price=True)
    index = {r.id: n for n, r in enumerate(runs)}
    proposals = RuleDistiller().revise(SkillEvidence(skill=skill, runs=runs),
                                       EvolutionConfig(learn_stated_values=stated))
    assert [_proposal(p, index) for p in proposals] == REVISED[stated]


EXPECTED: dict = {'refund-check-first': {'induce': [{'kind': 'add',
                                    'origin': 'induce',
                                    'reason': 'recurring method: 3 successful run(s) followed find_order > '
                                              'check_refund_policy > issue_refund; 1 mistake(s) from 2 failure(s)',
                                    'evidence': [0, 1, 2, 3, 4],
                                    'lessons': [{'kind': 'procedure',
                                                 'steps': [{'tool': 'find_order',
                                                            'args': {'order_id': '<order_id>'},
                                                            'sources': {'order_id': 'request'}},
                                                           {'tool': 'check_refund_policy',
                                                            'args': {'order_id': '<order_id>'},
                                                            'sources': {'order_id': 'request'}},
                                                           {'tool': 'issue_refund',
                                                            'args': {'order_id': '<order_id>',
                                                                     'amount': '<amount>'},
                                                            'sources': {'order_id': 'request',
                                                                        'amount': 'find_order'}}]},
                                                {'kind': 'check_first',
                                                 'check': 'check_refund_policy',
                                                 'tool': 'issue_refund'}],
                                    'content': {'name': 'refund-order-arrived-damaged',
                                                'description': 'When the user asks something like "refund order … '
                                                               'for …, it arrived damaged."; the method uses '
                                                               '`find_order`, `check_refund_policy`, '
                                                               '`issue_refund`.',
                                                'body': '## Method\n'
                                                        'Call the tools in this order: `find_order`, then '
                                                        '`check_refund_policy`, then `issue_refund`.\n'
                                                        '1. Call `find_order` with `order_id`=<order_id> (from '
                                                        'the request).\n'
                                                        '2. Call `check_refund_policy` with `order_id`=<order_id> '
                                                        '(from the request).\n'
                                                        '3. Call `issue_refund` with `order_id`=<order_id> (from '
                                                        'the request), `amount`=<amount> (from the result of '
                                                        '`find_order`).\n'
                                                        'Then answer the user with the results.\n'
                                                        '\n'
                                                        '## Checks\n'
                                                        '- Always call `check_refund_policy` before '
                                                        '`issue_refund`.',
                                                'kind': 'procedure',
                                                'tools': ['find_order', 'check_refund_policy', 'issue_refund'],
                                                'tags': ['learned'],
                                                'toolset': []}}],
                        'mistakes': [{'lesson': {'kind': 'check_first',
                                                 'check': 'check_refund_policy',
                                                 'tool': 'issue_refund'},
                                      'why': '2 failed run(s) called `issue_refund` without `check_refund_policy` '
                                             'first; 3 of 3 successes checked first'}]},
 'refund-extra-call-and-repeats': {'induce': [{'kind': 'add',
                                               'origin': 'induce',
                                               'reason': 'recurring method: 4 successful run(s) followed '
                                                         'find_order > check_refund_policy > issue_refund; 2 '
                                                         'mistake(s) from 3 failure(s)',
                                               'evidence': [0, 1, 2, 3, 4, 5, 6],
                                               'lessons': [{'kind': 'procedure',
                                                            'steps': [{'tool': 'find_order',
                                                                       'args': {'order_id': '<order_id>'},
                                                                       'sources': {'order_id': 'request'}},
                                                                      {'tool': 'check_refund_policy',
                                                                       'args': {'order_id': '<order_id>'},
                                                                       'sources': {'order_id': 'request'}},
                                                                      {'tool': 'issue_refund',
                                                                       'args': {'order_id': '<order_id>',
                                                                                'amount': '<amount>'},
                                                                       'sources': {'order_id': 'request',
                                                                                   'amount': 'find_order'}}]},
                                                           {'kind': 'pitfall',
                                                            'avoid': 'call',
                                                            'tool': 'email_customer'},
                                                           {'kind': 'pitfall', 'avoid': 'repeat'}],
                                               'content': {'name': 'refund-order-arrived-damaged',
                                                           'description': 'When the user asks something like '
                                                                          '"refund order … for …, it arrived '
                                                                          'damaged."; the method uses '
                                                                          '`find_order`, `check_refund_policy`, '
                                                                          '`issue_refund`.',
                                                           'body': '## Method\n'
                                                                   'Call the tools in this order: `find_order`, '
                                                                   'then `check_refund_policy`, then '
                                                                   '`issue_refund`.\n'
                                                                   '1. Call `find_order` with '
                                                                   '`order_id`=<order_id> (from the request).\n'
                                                                   '2. Call `check_refund_policy` with '
                                                                   '`order_id`=<order_id> (from the request).\n'
                                                                   '3. Call `issue_refund` with '
                                                                   '`order_id`=<order_id> (from the request), '
                                                                   '`amount`=<amount> (from the result of '
                                                                   '`find_order`).\n'
                                                                   'Then answer the user with the results.\n'
                                                                   '\n'
                                                                   '## Common mistakes\n'
                                                                   '- Do not call `email_customer` for this kind '
                                                                   'of request: runs that called it failed and no '
                                                                   'successful run needed it.\n'
                                                                   '- Never repeat a tool call with the same '
                                                                   'arguments: if it did not help, change the '
                                                                   'arguments or answer with what is known.',
                                                           'kind': 'procedure',
                                                           'tools': ['find_order',
                                                                     'check_refund_policy',
                                                                     'issue_refund'],
                                                           'tags': ['learned'],
                                                           'toolset': []}}],
                                   'mistakes': [{'lesson': {'kind': 'pitfall',
                                                            'avoid': 'call',
                                                            'tool': 'email_customer'},
                                                 'why': '3 failed run(s) took `email_customer`, no success did'},
                                                {'lesson': {'kind': 'pitfall', 'avoid': 'repeat'},
                                                 'why': '3 failed run(s) repeated identical calls'}]},
 'refund-few-bullets': {'induce': [{'kind': 'add',
                                    'origin': 'induce',
                                    'reason': 'recurring method: 3 successful run(s) followed find_order > '
                                              'check_refund_policy > issue_refund; 1 mistake(s) from 3 failure(s)',
                                    'evidence': [0, 1, 2, 3, 4, 5],
                                    'lessons': [{'kind': 'procedure',
                                                 'steps': [{'tool': 'find_order',
                                                            'args': {'order_id': '<order_id>'},
                                                            'sources': {'order_id': 'request'}},
                                                           {'tool': 'check_refund_policy',
                                                            'args': {'order_id': '<order_id>'},
                                                            'sources': {'order_id': 'request'}},
                                                           {'tool': 'issue_refund',
                                                            'args': {'order_id': '<order_id>',
                                                                     'amount': '<amount>'},
                                                            'sources': {'order_id': 'request',
                                                                        'amount': 'find_order'}}]},
                                                {'kind': 'pitfall', 'avoid': 'call', 'tool': 'email_customer'}],
                                    'content': {'name': 'refund-order-arrived-damaged',
                                                'description': 'When the user asks something like "refund order … '
                                                               'for …, it arrived damaged."; the method uses '
                                                               '`find_order`, `check_refund_policy`, '
                                                               '`issue_refund`.',
                                                'body': '## Method\n'
                                                        'Call the tools in this order: `find_order`, then '
                                                        '`check_refund_policy`, then `issue_refund`.\n'
                                                        '1. Call `find_order` with `order_id`=<order_id> (from '
                                                        'the request).\n'
                                                        '2. Call `check_refund_policy` with `order_id`=<order_id> '
                                                        '(from the request).\n'
                                                        '3. Call `issue_refund` with `order_id`=<order_id> (from '
                                                        'the request), `amount`=<amount> (from the result of '
                                                        '`find_order`).\n'
                                                        'Then answer the user with the results.\n'
                                                        '\n'
                                                        '## Common mistakes\n'
                                                        '- Do not call `email_customer` for this kind of request: '
                                                        'runs that called it failed and no successful run needed '
                                                        'it.',
                                                'kind': 'procedure',
                                                'tools': ['find_order', 'check_refund_policy', 'issue_refund'],
                                                'tags': ['learned'],
                                                'toolset': []}}],
                        'mistakes': [{'lesson': {'kind': 'pitfall', 'avoid': 'call', 'tool': 'email_customer'},
                                      'why': '2 failed run(s) took `email_customer`, no success did'},
                                     {'lesson': {'kind': 'pitfall', 'avoid': 'repeat'},
                                      'why': '2 failed run(s) repeated identical calls'}]},
 'meeting-ask-for': {'induce': [{'kind': 'add',
                                 'origin': 'induce',
                                 'reason': 'recurring method: 3 successful run(s) followed find_contact > '
                                           'create_event; 1 mistake(s) from 2 failure(s)',
                                 'evidence': [0, 1, 2, 3, 4],
                                 'lessons': [{'kind': 'procedure',
                                              'steps': [{'tool': 'find_contact',
                                                         'args': {'name': '<name>'},
                                                         'sources': {'name': 'request'}},
                                                        {'tool': 'create_event',
                                                         'args': {'attendee': '<attendee>', 'title': 'sync'},
                                                         'sources': {'attendee': 'find_contact'}}]},
                                             {'kind': 'ask_for', 'tool': 'find_contact'}],
                                 'content': {'name': 'set-meeting-next-week',
                                             'description': 'When the user asks something like "set up a meeting '
                                                            'with … next week."; the method uses `find_contact`, '
                                                            '`create_event`.',
                                             'body': '## Method\n'
                                                     'Call the tools in this order: `find_contact`, then '
                                                     '`create_event`.\n'
                                                     '1. Call `find_contact` with `name`=<name> (from the '
                                                     'request).\n'
                                                     '2. Call `create_event` with `attendee`=<attendee> (from the '
                                                     'result of `find_contact`), `title`=`sync`.\n'
                                                     'Then answer the user with the results.\n'
                                                     '\n'
                                                     '## Checks\n'
                                                     '- If the request does not state every value `find_contact` '
                                                     'needs unambiguously, ask the user instead of guessing.',
                                             'kind': 'procedure',
                                             'tools': ['find_contact', 'create_event'],
                                             'tags': ['learned'],
                                             'toolset': []}}],
                     'mistakes': [{'lesson': {'kind': 'ask_for', 'tool': 'find_contact'},
                                   'why': '2 failed run(s) called `find_contact` without asking the user; 3 of 3 '
                                          'successes of the same requests asked first'}]},
 'meeting-ask-for-one-asked': {'induce': [{'kind': 'add',
                                           'origin': 'induce',
                                           'reason': 'recurring method: 3 successful run(s) followed find_contact '
                                                     '> create_event',
                                           'evidence': [0, 1, 2, 3],
                                           'lessons': [{'kind': 'procedure',
                                                        'steps': [{'tool': 'find_contact',
                                                                   'args': {'name': '<name>'},
                                                                   'sources': {'name': 'request'}},
                                                                  {'tool': 'create_event',
                                                                   'args': {'attendee': '<attendee>',
                                                                            'title': 'sync'},
                                                                   'sources': {'attendee': 'find_contact'}}]}],
                                           'content': {'name': 'set-meeting-next-week',
                                                       'description': 'When the user asks something like "set up '
                                                                      'a meeting with … next week."; the method '
                                                                      'uses `find_contact`, `create_event`.',
                                                       'body': '## Method\n'
                                                               'Call the tools in this order: `find_contact`, '
                                                               'then `create_event`.\n'
                                                               '1. Call `find_contact` with `name`=<name> (from '
                                                               'the request).\n'
                                                               '2. Call `create_event` with `attendee`=<attendee> '
                                                               '(from the result of `find_contact`), '
                                                               '`title`=`sync`.\n'
                                                               'Then answer the user with the results.',
                                                       'kind': 'procedure',
                                                       'tools': ['find_contact', 'create_event'],
                                                       'tags': ['learned'],
                                                       'toolset': []}}],
                               'mistakes': []},
 'lights-call-that-errs': {'induce': [{'kind': 'add',
                                       'origin': 'induce',
                                       'reason': 'recurring method: 3 successful run(s) followed set_light > '
                                                 'set_light; 2 mistake(s) from 2 failure(s)',
                                       'evidence': [0, 1, 2, 3, 4],
                                       'lessons': [{'kind': 'procedure',
                                                    'steps': [{'tool': 'set_light',
                                                               'args': {'room': '<room_1>',
                                                                        'on': 'true',
                                                                        'brightness': '<brightness>'},
                                                               'sources': {'room': 'request',
                                                                           'brightness': 'request'}},
                                                              {'tool': 'set_light',
                                                               'args': {'room': '<room_2>', 'on': 'false'},
                                                               'sources': {'room': 'request'}}]},
                                                   {'kind': 'pitfall',
                                                    'avoid': 'skip',
                                                    'tool': 'set_light',
                                                    'steps': [{'tool': 'set_light',
                                                               'args': {'on': 'False', 'room': '<value>'}}]},
                                                   {'kind': 'pitfall',
                                                    'avoid': 'call',
                                                    'tool': 'set_light',
                                                    'steps': [{'tool': 'set_light',
                                                               'args': {'brightness': '0',
                                                                        'on': 'False',
                                                                        'room': '<value>'}}]}],
                                       'content': {'name': 'turn-light-off',
                                                   'description': 'When the user asks something like "turn on the '
                                                                  '… light at … % and turn off the … light."; the '
                                                                  'method uses `set_light`.',
                                                   'body': '## Method\n'
                                                           '1. Call `set_light` with `room`=<room_1> (the first '
                                                           '`room` the request names), `on`=`true`, '
                                                           '`brightness`=<brightness> (from the request).\n'
                                                           '2. Call `set_light` with `room`=<room_2> (the second '
                                                           '`room` the request names), `on`=`false`.\n'
                                                           'Then answer the user with the results.\n'
                                                           '\n'
                                                           '## Common mistakes\n'
                                                           '- Do not skip `set_light`: every successful run '
                                                           'called it.\n'
                                                           '- Do not call `set_light` with `brightness`=`0`, '
                                                           '`on`=`False`, `room`=<value>: runs that did failed '
                                                           'and no successful run did.',
                                                   'kind': 'procedure',
                                                   'tools': ['set_light'],
                                                   'tags': ['learned'],
                                                   'toolset': []}}],
                           'mistakes': [{'lesson': {'kind': 'pitfall',
                                                    'avoid': 'skip',
                                                    'tool': 'set_light',
                                                    'steps': [{'tool': 'set_light',
                                                               'args': {'on': 'False', 'room': '<value>'}}]},
                                         'why': "2 failed run(s) never took `set_light` {'on': 'False', 'room': "
                                                "'_'}"},
                                        {'lesson': {'kind': 'pitfall',
                                                    'avoid': 'call',
                                                    'tool': 'set_light',
                                                    'steps': [{'tool': 'set_light',
                                                               'args': {'brightness': '0',
                                                                        'on': 'False',
                                                                        'room': '<value>'}}]},
                                         'why': "2 failed run(s) took `set_light` {'brightness': '0', 'on': "
                                                "'False', 'room': '_'}, no success did"}]},
 'lights-call-that-worked': {'induce': [{'kind': 'add',
                                         'origin': 'induce',
                                         'reason': 'recurring method: 3 successful run(s) followed set_light > '
                                                   'set_light; 1 mistake(s) from 2 failure(s)',
                                         'evidence': [0, 1, 2, 3, 4],
                                         'lessons': [{'kind': 'procedure',
                                                      'steps': [{'tool': 'set_light',
                                                                 'args': {'room': '<room_1>',
                                                                          'on': 'true',
                                                                          'brightness': '<brightness>'},
                                                                 'sources': {'room': 'request',
                                                                             'brightness': 'request'}},
                                                                {'tool': 'set_light',
                                                                 'args': {'room': '<room_2>', 'on': 'false'},
                                                                 'sources': {'room': 'request'}}]},
                                                     {'kind': 'pitfall',
                                                      'avoid': 'skip',
                                                      'tool': 'set_light',
                                                      'steps': [{'tool': 'set_light',
                                                                 'args': {'on': 'False', 'room': '<value>'}}]}],
                                         'content': {'name': 'turn-light-off',
                                                     'description': 'When the user asks something like "turn on '
                                                                    'the … light at … % and turn off the … '
                                                                    'light."; the method uses `set_light`.',
                                                     'body': '## Method\n'
                                                             '1. Call `set_light` with `room`=<room_1> (the first '
                                                             '`room` the request names), `on`=`true`, '
                                                             '`brightness`=<brightness> (from the request).\n'
                                                             '2. Call `set_light` with `room`=<room_2> (the '
                                                             'second `room` the request names), `on`=`false`.\n'
                                                             'Then answer the user with the results.\n'
                                                             '\n'
                                                             '## Common mistakes\n'
                                                             '- Do not skip `set_light`: every successful run '
                                                             'called it.',
                                                     'kind': 'procedure',
                                                     'tools': ['set_light'],
                                                     'tags': ['learned'],
                                                     'toolset': []}}],
                             'mistakes': [{'lesson': {'kind': 'pitfall',
                                                      'avoid': 'skip',
                                                      'tool': 'set_light',
                                                      'steps': [{'tool': 'set_light',
                                                                 'args': {'on': 'False', 'room': '<value>'}}]},
                                           'why': "2 failed run(s) never took `set_light` {'on': 'False', 'room': "
                                                  "'_'}"}]},
 'first-train-described': {'induce': [{'kind': 'add',
                                       'origin': 'induce',
                                       'reason': 'recurring method: 3 successful run(s) followed find_trains; 1 '
                                                 'mistake(s) from 3 failure(s)',
                                       'evidence': [0, 1, 2, 3, 4, 5],
                                       'lessons': [{'kind': 'procedure',
                                                    'steps': [{'tool': 'find_trains',
                                                               'args': {'origin': '<origin>',
                                                                        'destination': '<destination>',
                                                                        'date': '<date>'},
                                                               'sources': {'origin': 'request',
                                                                           'destination': 'request'}}]},
                                                   {'kind': 'pitfall',
                                                    'avoid': 'skip',
                                                    'tool': 'find_trains',
                                                    'steps': [{'tool': 'find_trains',
                                                               'args': {'date': '2027-03-09',
                                                                        'destination': '<value>',
                                                                        'origin': '<value>'}}]}],
                                       'content': {'name': 'first-train-tomorrow',
                                                   'description': 'When the user asks something like "when is the '
                                                                  'first train from … to … tomorrow?"; the method '
                                                                  'uses `find_trains`.',
                                                   'body': '## Method\n'
                                                           '1. Call `find_trains` with `origin`=<origin> (from '
                                                           'the request), `destination`=<destination> (from the '
                                                           'request), `date`=<date>.\n'
                                                           'Then answer the user with the results.\n'
                                                           '\n'
                                                           '## Common mistakes\n'
                                                           '- Do not skip `find_trains`: every successful run '
                                                           'called it.',
                                                   'kind': 'procedure',
                                                   'tools': ['find_trains'],
                                                   'tags': ['learned'],
                                                   'toolset': []}}],
                           'mistakes': [{'lesson': {'kind': 'pitfall',
                                                    'avoid': 'skip',
                                                    'tool': 'find_trains',
                                                    'steps': [{'tool': 'find_trains',
                                                               'args': {'date': '2027-03-09',
                                                                        'destination': '<value>',
                                                                        'origin': '<value>'}}]},
                                         'why': "3 failed run(s) never took `find_trains` {'date': '2027-03-09', "
                                                "'destination': '_', 'origin': '_'}"}]},
 'first-train-pitfalls': {'induce': [{'kind': 'add',
                                      'origin': 'induce',
                                      'reason': 'recurring mistakes: 3 failed run(s) never took `find_trains` '
                                                "{'date': '2027-03-09', 'destination': '_', 'origin': '_'}",
                                      'evidence': [0, 1, 2, 3, 4, 5],
                                      'lessons': [{'kind': 'pitfall',
                                                   'avoid': 'skip',
                                                   'tool': 'find_trains',
                                                   'steps': [{'tool': 'find_trains',
                                                              'args': {'date': '2027-03-09',
                                                                       'destination': '<value>',
                                                                       'origin': '<value>'}}]}],
                                      'content': {'name': 'first-train-tomorrow-pitfalls',
                                                  'description': 'When the user asks something like "when is the '
                                                                 'first train from … to … tomorrow?"; mistakes to '
                                                                 'avoid when calling `find_trains`.',
                                                  'body': '## Common mistakes\n'
                                                          '- Do not skip `find_trains`: every successful run '
                                                          'called it.',
                                                  'kind': 'pitfall',
                                                  'tools': ['find_trains'],
                                                  'tags': ['learned'],
                                                  'toolset': []}}],
                          'mistakes': [{'lesson': {'kind': 'pitfall',
                                                   'avoid': 'skip',
                                                   'tool': 'find_trains',
                                                   'steps': [{'tool': 'find_trains',
                                                              'args': {'date': '2027-03-09',
                                                                       'destination': '<value>',
                                                                       'origin': '<value>'}}]},
                                        'why': "3 failed run(s) never took `find_trains` {'date': '2027-03-09', "
                                               "'destination': '_', 'origin': '_'}"}]},
 'balance-answer-unit': {'induce': [{'kind': 'add',
                                     'origin': 'induce',
                                     'reason': 'recurring mistakes: 3 successes stated `balance_cents` divided by '
                                               '100; 3 failed run(s) stated the raw number',
                                     'evidence': [0, 1, 2, 3, 4, 5],
                                     'lessons': [{'kind': 'answer_unit',
                                                  'tool': 'get_accounts',
                                                  'field': 'balance_cents',
                                                  'scale': 100}],
                                     'content': {'name': 'balance-account-euros-pitfalls',
                                                 'description': 'When the user asks something like "what is the '
                                                                'balance of my … account in euros?"; mistakes to '
                                                                'avoid when calling `get_accounts`.',
                                                 'body': '## Answer\n'
                                                         '- When `get_accounts` returns `balance_cents`, tell the '
                                                         'user that number divided by 100 (for example 75 is '
                                                         '0.75), never the raw number.',
                                                 'kind': 'pitfall',
                                                 'tools': ['get_accounts'],
                                                 'tags': ['learned'],
                                                 'toolset': []}}],
                         'mistakes': [{'lesson': {'kind': 'answer_unit',
                                                  'tool': 'get_accounts',
                                                  'field': 'balance_cents',
                                                  'scale': 100},
                                       'why': '3 successes stated `balance_cents` divided by 100; 3 failed run(s) '
                                              'stated the raw number'}]},
 'balance-raw-in-success': {'induce': [], 'mistakes': []},
 'visibility-answer-unit': {'induce': [{'kind': 'add',
                                        'origin': 'induce',
                                        'reason': 'recurring mistakes: 3 successes stated `visibility_m` divided '
                                                  'by 1000; 2 failed run(s) stated the raw number',
                                        'evidence': [0, 1, 2, 3, 4],
                                        'lessons': [{'kind': 'answer_unit',
                                                     'tool': 'current_conditions',
                                                     'field': 'visibility_m',
                                                     'scale': 1000}],
                                        'content': {'name': 'visibility-right-km-pitfalls',
                                                    'description': 'When the user asks something like "what\'s '
                                                                   'the visibility in … right now, in km?"; '
                                                                   'mistakes to avoid when calling '
                                                                   '`current_conditions`.',
                                                    'body': '## Answer\n'
                                                            '- When `current_conditions` returns `visibility_m`, '
                                                            'tell the user that number divided by 1000 (for '
                                                            'example 750 is 0.75), never the raw number.',
                                                    'kind': 'pitfall',
                                                    'tools': ['current_conditions'],
                                                    'tags': ['learned'],
                                                    'toolset': []}}],
                            'mistakes': [{'lesson': {'kind': 'answer_unit',
                                                     'tool': 'current_conditions',
                                                     'field': 'visibility_m',
                                                     'scale': 1000},
                                          'why': '3 successes stated `visibility_m` divided by 1000; 2 failed '
                                                 'run(s) stated the raw number'}]},
 'pickup-times-off': {'induce': [{'kind': 'add',
                                  'origin': 'induce',
                                  'reason': 'recurring mistakes: 2 failed run(s) never took `set_pickup_time` '
                                            "{'order_id': '_', 'time': '16:30'}",
                                  'evidence': [0, 1, 2, 3, 4],
                                  'lessons': [{'kind': 'pitfall',
                                               'avoid': 'skip',
                                               'tool': 'set_pickup_time',
                                               'steps': [{'tool': 'set_pickup_time',
                                                          'args': {'order_id': '<value>', 'time': '16:30'}}]}],
                                  'content': {'name': 'note-pick-half-past-pitfalls',
                                              'description': 'When the user asks something like "please note that '
                                                             'i\'ll pick up … at half past four this afternoon."; '
                                                             'mistakes to avoid when calling `set_pickup_time`.',
                                              'body': '## Common mistakes\n'
                                                      '- Do not skip `set_pickup_time`: every successful run '
                                                      'called it.',
                                              'kind': 'pitfall',
                                              'tools': ['set_pickup_time'],
                                              'tags': ['learned'],
                                              'toolset': []}}],
                      'mistakes': [{'lesson': {'kind': 'pitfall',
                                               'avoid': 'skip',
                                               'tool': 'set_pickup_time',
                                               'steps': [{'tool': 'set_pickup_time',
                                                          'args': {'order_id': '<value>', 'time': '16:30'}}]},
                                    'why': "2 failed run(s) never took `set_pickup_time` {'order_id': '_', "
                                           "'time': '16:30'}"}]},
 'pickup-times-on': {'induce': [{'kind': 'add',
                                 'origin': 'induce',
                                 'reason': 'recurring mistakes: 3 successes passed `time` as the time the user '
                                           'said; 2 failed run(s) passed another',
                                 'evidence': [0, 1, 2, 3, 4],
                                 'lessons': [{'kind': 'stated_time',
                                              'tool': 'set_pickup_time',
                                              'parameter': 'time'}],
                                 'content': {'name': 'note-pick-half-past-pitfalls',
                                             'description': 'When the user asks something like "please note that '
                                                            'i\'ll pick up … at half past four this afternoon."; '
                                                            'mistakes to avoid when calling `set_pickup_time`.',
                                             'body': '## Checks\n'
                                                     '- Pass `time` to `set_pickup_time` as the clock time the '
                                                     'user said, on the 24-hour clock (for example, twenty to '
                                                     'nine in the evening is 20:40), never another time.',
                                             'kind': 'pitfall',
                                             'tools': ['set_pickup_time'],
                                             'tags': ['learned'],
                                             'toolset': []}}],
                     'mistakes': [{'lesson': {'kind': 'stated_time',
                                              'tool': 'set_pickup_time',
                                              'parameter': 'time'},
                                   'why': '3 successes passed `time` as the time the user said; 2 failed run(s) '
                                          'passed another'}]},
 'pickup-times-said-differently-on': {'induce': [],
                                      'mistakes': [{'lesson': {'kind': 'pitfall',
                                                               'avoid': 'skip',
                                                               'tool': 'set_pickup_time',
                                                               'steps': [{'tool': 'set_pickup_time',
                                                                          'args': {'order_id': '<value>',
                                                                                   'time': '17:45'}}]},
                                                    'why': '2 failed run(s) never took `set_pickup_time` '
                                                           "{'order_id': '_', 'time': '17:45'}"}]},
 'pickup-times-a-success-passed-another-on': {'induce': [],
                                              'mistakes': [{'lesson': {'kind': 'pitfall',
                                                                       'avoid': 'skip',
                                                                       'tool': 'set_pickup_time',
                                                                       'steps': [{'tool': 'set_pickup_time',
                                                                                  'args': {'order_id': '<value>',
                                                                                           'time': '17:45'}}]},
                                                            'why': '1 failed run(s) never took `set_pickup_time` '
                                                                   "{'order_id': '_', 'time': '17:45'}"}]},
 'court-dates-off': {'induce': [{'kind': 'add',
                                 'origin': 'induce',
                                 'reason': 'recurring mistakes: 2 failed run(s) never took `reserve_court` '
                                           "{'date': '2027-03-10', 'time': '_'}",
                                 'evidence': [0, 1, 2, 3, 4],
                                 'lessons': [{'kind': 'pitfall',
                                              'avoid': 'skip',
                                              'tool': 'reserve_court',
                                              'steps': [{'tool': 'reserve_court',
                                                         'args': {'date': '2027-03-10', 'time': '<value>'}}]}],
                                 'content': {'name': 'reserve-squash-court-day-pitfalls',
                                             'description': 'When the user asks something like "reserve a squash '
                                                            'court for me the day after tomorrow at …."; mistakes '
                                                            'to avoid when calling `reserve_court`.',
                                             'body': '## Common mistakes\n'
                                                     '- Do not skip `reserve_court`: every successful run called '
                                                     'it.',
                                             'kind': 'pitfall',
                                             'tools': ['reserve_court'],
                                             'tags': ['learned'],
                                             'toolset': []}}],
                     'mistakes': [{'lesson': {'kind': 'pitfall',
                                              'avoid': 'skip',
                                              'tool': 'reserve_court',
                                              'steps': [{'tool': 'reserve_court',
                                                         'args': {'date': '2027-03-10', 'time': '<value>'}}]},
                                   'why': "2 failed run(s) never took `reserve_court` {'date': '2027-03-10', "
                                          "'time': '_'}"}]},
 'court-dates-on': {'induce': [{'kind': 'add',
                                'origin': 'induce',
                                'reason': 'recurring mistakes: 3 successes passed `date` as the date the user '
                                          'said; 2 failed run(s) passed another',
                                'evidence': [0, 1, 2, 3, 4],
                                'lessons': [{'kind': 'stated_date', 'tool': 'reserve_court', 'parameter': 'date'}],
                                'content': {'name': 'reserve-squash-court-day-pitfalls',
                                            'description': 'When the user asks something like "reserve a squash '
                                                           'court for me the day after tomorrow at …."; mistakes '
                                                           'to avoid when calling `reserve_court`.',
                                            'body': '## Checks\n'
                                                    '- Pass `date` to `reserve_court` as the date the user said, '
                                                    'counted from today\'s date ("the day after tomorrow" is '
                                                    'today plus two days), never another date.',
                                            'kind': 'pitfall',
                                            'tools': ['reserve_court'],
                                            'tags': ['learned'],
                                            'toolset': []}}],
                    'mistakes': [{'lesson': {'kind': 'stated_date', 'tool': 'reserve_court', 'parameter': 'date'},
                                  'why': '3 successes passed `date` as the date the user said; 2 failed run(s) '
                                         'passed another'}]},
 'court-dates-without-today-on': {'induce': [{'kind': 'add',
                                              'origin': 'induce',
                                              'reason': 'recurring mistakes: 1 failed run(s) never took '
                                                        "`reserve_court` {'date': '2027-03-10', 'time': '_'}",
                                              'evidence': [0, 1, 2],
                                              'lessons': [{'kind': 'pitfall',
                                                           'avoid': 'skip',
                                                           'tool': 'reserve_court',
                                                           'steps': [{'tool': 'reserve_court',
                                                                      'args': {'date': '2027-03-10',
                                                                               'time': '<value>'}}]}],
                                              'content': {'name': 'reserve-squash-court-day-pitfalls',
                                                          'description': 'When the user asks something like '
                                                                         '"reserve a squash court for me the day '
                                                                         'after tomorrow at …."; mistakes to '
                                                                         'avoid when calling `reserve_court`.',
                                                          'body': '## Common mistakes\n'
                                                                  '- Do not skip `reserve_court`: every '
                                                                  'successful run called it.',
                                                          'kind': 'pitfall',
                                                          'tools': ['reserve_court'],
                                                          'tags': ['learned'],
                                                          'toolset': []}}],
                                  'mistakes': [{'lesson': {'kind': 'pitfall',
                                                           'avoid': 'skip',
                                                           'tool': 'reserve_court',
                                                           'steps': [{'tool': 'reserve_court',
                                                                      'args': {'date': '2027-03-10',
                                                                               'time': '<value>'}}]},
                                                'why': "1 failed run(s) never took `reserve_court` {'date': "
                                                       "'2027-03-10', 'time': '_'}"}]},
 'court-dates-and-price-off': {'induce': [{'kind': 'add',
                                           'origin': 'induce',
                                           'reason': 'recurring mistakes: 2 failed run(s) never took '
                                                     "`reserve_court` {'date': '2027-03-10', 'time': '_'}; 3 "
                                                     'successes stated `price_cents` divided by 100; 2 failed '
                                                     'run(s) stated the raw number',
                                           'evidence': [0, 1, 2, 3, 4],
                                           'lessons': [{'kind': 'pitfall',
                                                        'avoid': 'skip',
                                                        'tool': 'reserve_court',
                                                        'steps': [{'tool': 'reserve_court',
                                                                   'args': {'date': '2027-03-10',
                                                                            'time': '<value>'}}]},
                                                       {'kind': 'answer_unit',
                                                        'tool': 'reserve_court',
                                                        'field': 'price_cents',
                                                        'scale': 100}],
                                           'content': {'name': 'reserve-squash-court-day-pitfalls',
                                                       'description': 'When the user asks something like "reserve '
                                                                      'a squash court for me the day after '
                                                                      'tomorrow at …."; mistakes to avoid when '
                                                                      'calling `reserve_court`.',
                                                       'body': '## Answer\n'
                                                               '- When `reserve_court` returns `price_cents`, '
                                                               'tell the user that number divided by 100 (for '
                                                               'example 75 is 0.75), never the raw number.\n'
                                                               '\n'
                                                               '## Common mistakes\n'
                                                               '- Do not skip `reserve_court`: every successful '
                                                               'run called it.',
                                                       'kind': 'pitfall',
                                                       'tools': ['reserve_court'],
                                                       'tags': ['learned'],
                                                       'toolset': []}}],
                               'mistakes': [{'lesson': {'kind': 'pitfall',
                                                        'avoid': 'skip',
                                                        'tool': 'reserve_court',
                                                        'steps': [{'tool': 'reserve_court',
                                                                   'args': {'date': '2027-03-10',
                                                                            'time': '<value>'}}]},
                                             'why': "2 failed run(s) never took `reserve_court` {'date': "
                                                    "'2027-03-10', 'time': '_'}"},
                                            {'lesson': {'kind': 'answer_unit',
                                                        'tool': 'reserve_court',
                                                        'field': 'price_cents',
                                                        'scale': 100},
                                             'why': '3 successes stated `price_cents` divided by 100; 2 failed '
                                                    'run(s) stated the raw number'}]},
 'court-dates-and-price-on': {'induce': [{'kind': 'add',
                                          'origin': 'induce',
                                          'reason': 'recurring mistakes: 3 successes passed `date` as the date '
                                                    'the user said; 2 failed run(s) passed another; 3 successes '
                                                    'stated `price_cents` divided by 100; 2 failed run(s) stated '
                                                    'the raw number',
                                          'evidence': [0, 1, 2, 3, 4],
                                          'lessons': [{'kind': 'stated_date',
                                                       'tool': 'reserve_court',
                                                       'parameter': 'date'},
                                                      {'kind': 'answer_unit',
                                                       'tool': 'reserve_court',
                                                       'field': 'price_cents',
                                                       'scale': 100}],
                                          'content': {'name': 'reserve-squash-court-day-pitfalls',
                                                      'description': 'When the user asks something like "reserve '
                                                                     'a squash court for me the day after '
                                                                     'tomorrow at …."; mistakes to avoid when '
                                                                     'calling `reserve_court`.',
                                                      'body': '## Checks\n'
                                                              '- Pass `date` to `reserve_court` as the date the '
                                                              'user said, counted from today\'s date ("the day '
                                                              'after tomorrow" is today plus two days), never '
                                                              'another date.\n'
                                                              '\n'
                                                              '## Answer\n'
                                                              '- When `reserve_court` returns `price_cents`, tell '
                                                              'the user that number divided by 100 (for example '
                                                              '75 is 0.75), never the raw number.',
                                                      'kind': 'pitfall',
                                                      'tools': ['reserve_court'],
                                                      'tags': ['learned'],
                                                      'toolset': []}}],
                              'mistakes': [{'lesson': {'kind': 'stated_date',
                                                       'tool': 'reserve_court',
                                                       'parameter': 'date'},
                                            'why': '3 successes passed `date` as the date the user said; 2 failed '
                                                   'run(s) passed another'},
                                           {'lesson': {'kind': 'answer_unit',
                                                       'tool': 'reserve_court',
                                                       'field': 'price_cents',
                                                       'scale': 100},
                                            'why': '3 successes stated `price_cents` divided by 100; 2 failed '
                                                   'run(s) stated the raw number'}]},
 'court-dates-and-times-off': {'induce': [{'kind': 'add',
                                           'origin': 'induce',
                                           'reason': 'recurring mistakes: 2 failed run(s) never took '
                                                     "`reserve_court` {'date': '2027-03-10', 'time': '_'}",
                                           'evidence': [0, 1, 2, 3, 4],
                                           'lessons': [{'kind': 'pitfall',
                                                        'avoid': 'skip',
                                                        'tool': 'reserve_court',
                                                        'steps': [{'tool': 'reserve_court',
                                                                   'args': {'date': '2027-03-10',
                                                                            'time': '<value>'}}]}],
                                           'content': {'name': 'reserve-squash-court-day-pitfalls',
                                                       'description': 'When the user asks something like "reserve '
                                                                      'a squash court for me the day after '
                                                                      'tomorrow at …."; mistakes to avoid when '
                                                                      'calling `reserve_court`.',
                                                       'body': '## Common mistakes\n'
                                                               '- Do not skip `reserve_court`: every successful '
                                                               'run called it.',
                                                       'kind': 'pitfall',
                                                       'tools': ['reserve_court'],
                                                       'tags': ['learned'],
                                                       'toolset': []}}],
                               'mistakes': [{'lesson': {'kind': 'pitfall',
                                                        'avoid': 'skip',
                                                        'tool': 'reserve_court',
                                                        'steps': [{'tool': 'reserve_court',
                                                                   'args': {'date': '2027-03-10',
                                                                            'time': '<value>'}}]},
                                             'why': "2 failed run(s) never took `reserve_court` {'date': "
                                                    "'2027-03-10', 'time': '_'}"}]},
 'court-dates-and-times-on': {'induce': [{'kind': 'add',
                                          'origin': 'induce',
                                          'reason': 'recurring mistakes: 3 successes passed `time` as the time '
                                                    'the user said; 2 failed run(s) passed another; 3 successes '
                                                    'passed `date` as the date the user said; 2 failed run(s) '
                                                    'passed another',
                                          'evidence': [0, 1, 2, 3, 4],
                                          'lessons': [{'kind': 'stated_time',
                                                       'tool': 'reserve_court',
                                                       'parameter': 'time'},
                                                      {'kind': 'stated_date',
                                                       'tool': 'reserve_court',
                                                       'parameter': 'date'}],
                                          'content': {'name': 'reserve-squash-court-day-pitfalls',
                                                      'description': 'When the user asks something like "reserve '
                                                                     'a squash court for me the day after '
                                                                     'tomorrow at …."; mistakes to avoid when '
                                                                     'calling `reserve_court`.',
                                                      'body': '## Checks\n'
                                                              '- Pass `time` to `reserve_court` as the clock time '
                                                              'the user said, on the 24-hour clock (for example, '
                                                              'twenty to nine in the evening is 20:40), never '
                                                              'another time.\n'
                                                              '- Pass `date` to `reserve_court` as the date the '
                                                              'user said, counted from today\'s date ("the day '
                                                              'after tomorrow" is today plus two days), never '
                                                              'another date.',
                                                      'kind': 'pitfall',
                                                      'tools': ['reserve_court'],
                                                      'tags': ['learned'],
                                                      'toolset': []}}],
                              'mistakes': [{'lesson': {'kind': 'stated_time',
                                                       'tool': 'reserve_court',
                                                       'parameter': 'time'},
                                            'why': '3 successes passed `time` as the time the user said; 2 failed '
                                                   'run(s) passed another'},
                                           {'lesson': {'kind': 'stated_date',
                                                       'tool': 'reserve_court',
                                                       'parameter': 'date'},
                                            'why': '3 successes passed `date` as the date the user said; 2 failed '
                                                   'run(s) passed another'}]},
 'court-dates-and-price-one-bullet-on': {'induce': [{'kind': 'add',
                                                     'origin': 'induce',
                                                     'reason': 'recurring mistakes: 3 successes passed `date` as '
                                                               'the date the user said; 2 failed run(s) passed '
                                                               'another',
                                                     'evidence': [0, 1, 2, 3, 4],
                                                     'lessons': [{'kind': 'stated_date',
                                                                  'tool': 'reserve_court',
                                                                  'parameter': 'date'}],
                                                     'content': {'name': 'reserve-squash-court-day-pitfalls',
                                                                 'description': 'When the user asks something '
                                                                                'like "reserve a squash court for '
                                                                                'me the day after tomorrow at '
                                                                                '…."; mistakes to avoid when '
                                                                                'calling `reserve_court`.',
                                                                 'body': '## Checks\n'
                                                                         '- Pass `date` to `reserve_court` as the '
                                                                         'date the user said, counted from '
                                                                         'today\'s date ("the day after tomorrow" '
                                                                         'is today plus two days), never another '
                                                                         'date.',
                                                                 'kind': 'pitfall',
                                                                 'tools': ['reserve_court'],
                                                                 'tags': ['learned'],
                                                                 'toolset': []}}],
                                         'mistakes': [{'lesson': {'kind': 'stated_date',
                                                                  'tool': 'reserve_court',
                                                                  'parameter': 'date'},
                                                       'why': '3 successes passed `date` as the date the user '
                                                              'said; 2 failed run(s) passed another'},
                                                      {'lesson': {'kind': 'answer_unit',
                                                                  'tool': 'reserve_court',
                                                                  'field': 'price_cents',
                                                                  'scale': 100},
                                                       'why': '3 successes stated `price_cents` divided by 100; 2 '
                                                              'failed run(s) stated the raw number'}]},
 'small-talk-two-wordings': {'induce': [{'kind': 'add',
                                         'origin': 'induce',
                                         'reason': '2 successful run(s) called no tool; 2 failed run(s) called '
                                                   'get_soil_moisture, water_bed',
                                         'evidence': [0, 2, 1, 3],
                                         'lessons': [{'kind': 'no_tool'}],
                                         'content': {'name': 'use-no-tools',
                                                     'description': 'When the user says something like "morning! '
                                                                    'nice weather for it." or "hey there, how is '
                                                                    'your day going?" and asks for nothing a tool '
                                                                    'does.',
                                                     'body': '## Checks\n'
                                                             '- If the user only makes conversation and asks for '
                                                             'nothing a tool does, call no tool: reply in one or '
                                                             'two sentences.',
                                                     'kind': 'pitfall',
                                                     'tools': [],
                                                     'tags': ['learned'],
                                                     'toolset': []}}],
                             'mistakes': []},
 'small-talk-one-wording': {'induce': [{'kind': 'add',
                                        'origin': 'induce',
                                        'reason': '2 successful run(s) called no tool; 3 failed run(s) called '
                                                  'water_bed',
                                        'evidence': [0, 1, 2, 3, 4],
                                        'lessons': [{'kind': 'no_tool'}],
                                        'content': {'name': 'much-needed-no-tools',
                                                    'description': 'When the user says something like "thank you '
                                                                   'so much, that\'s all i needed." and asks for '
                                                                   'nothing a tool does.',
                                                    'body': '## Checks\n'
                                                            '- If the user only makes conversation and asks for '
                                                            'nothing a tool does, call no tool: reply in one or '
                                                            'two sentences.',
                                                    'kind': 'pitfall',
                                                    'tools': [],
                                                    'tags': ['learned'],
                                                    'toolset': []}}],
                            'mistakes': []},
 'small-talk-one-caller': {'induce': [], 'mistakes': []}}


REVISED: dict = {False: [{'kind': 'update',
          'origin': 'revise',
          'reason': "common mistakes: 2 failed run(s) never took `reserve_court` {'date': '2027-03-10', 'time': "
                    "'_'}; 3 successes stated `price_cents` divided by 100; 2 failed run(s) stated the raw number",
          'evidence': [3, 4],
          'lessons': [{'kind': 'guidance', 'text': 'Be brief.'},
                      {'kind': 'pitfall',
                       'avoid': 'skip',
                       'tool': 'reserve_court',
                       'steps': [{'tool': 'reserve_court', 'args': {'date': '2027-03-10', 'time': '<value>'}}]},
                      {'kind': 'answer_unit', 'tool': 'reserve_court', 'field': 'price_cents', 'scale': 100}],
          'content': {'name': 'court-bookings',
                      'description': 'Reserve a squash court on the day the user said.',
                      'body': '## Answer\n'
                              '- When `reserve_court` returns `price_cents`, tell the user that number divided by '
                              '100 (for example 75 is 0.75), never the raw number.\n'
                              '\n'
                              '## Common mistakes\n'
                              '- Do not skip `reserve_court`: every successful run called it.\n'
                              '\n'
                              '## Guidance\n'
                              '- Be brief.',
                      'kind': 'procedure',
                      'tools': ['reserve_court'],
                      'tags': [],
                      'toolset': []}}],
 True: [{'kind': 'update',
         'origin': 'revise',
         'reason': 'common mistakes: 3 successes passed `date` as the date the user said; 2 failed run(s) passed '
                   'another; 3 successes stated `price_cents` divided by 100; 2 failed run(s) stated the raw '
                   'number',
         'evidence': [3, 4],
         'lessons': [{'kind': 'guidance', 'text': 'Be brief.'},
                     {'kind': 'stated_date', 'tool': 'reserve_court', 'parameter': 'date'},
                     {'kind': 'answer_unit', 'tool': 'reserve_court', 'field': 'price_cents', 'scale': 100}],
         'content': {'name': 'court-bookings',
                     'description': 'Reserve a squash court on the day the user said.',
                     'body': '## Checks\n'
                             "- Pass `date` to `reserve_court` as the date the user said, counted from today's "
                             'date ("the day after tomorrow" is today plus two days), never another date.\n'
                             '\n'
                             '## Answer\n'
                             '- When `reserve_court` returns `price_cents`, tell the user that number divided by '
                             '100 (for example 75 is 0.75), never the raw number.\n'
                             '\n'
                             '## Guidance\n'
                             '- Be brief.',
                     'kind': 'procedure',
                     'tools': ['reserve_court'],
                     'tags': [],
                     'toolset': []}}]}
