"""The adapters' constructors: explicit, typed keywords, whole configs, each option given one way."""

from __future__ import annotations

import datetime as dt
import inspect
import pickle

import pytest
from langchain_core.messages import HumanMessage

from skillbank.adapters._budget_middleware import RunBudgetMiddleware
from skillbank.adapters.callbacks import SkillBankCallbackHandler
from skillbank.adapters.config import BudgetConfig, InjectionConfig, RecordingConfig
from skillbank.adapters.injection import SkillInjector, inject_skills
from skillbank.adapters._injection_middleware import SkillInjectionMiddleware
from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters.langgraph import skillbank_hook, skillbank_prompt
from skillbank.adapters._recording_middleware import SkillRecordingMiddleware
from skillbank.consistency.agents import middleware_keywords
from skillbank.live._config import LiveConfig

CONSTRUCTORS = [SkillBankMiddleware, SkillInjectionMiddleware, SkillRecordingMiddleware, SkillBankCallbackHandler,
                RunBudgetMiddleware, SkillInjector, inject_skills, skillbank_prompt, skillbank_hook]


def check(state) -> bool:
    return True


@pytest.mark.parametrize("constructor", CONSTRUCTORS, ids=lambda c: c.__name__)
def test_every_option_is_a_named_typed_parameter_with_a_default(constructor):
    params = inspect.signature(constructor).parameters.values()
    assert not [p.name for p in params if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    for p in params:
        if p.kind is p.KEYWORD_ONLY:
            assert p.annotation is not p.empty and p.default is not p.empty, p.name


@pytest.mark.parametrize("build, unknown", [
    (lambda bank: SkillBankMiddleware(bank, top_k=3), "top_k"),
    (lambda bank: SkillBankMiddleware(bank, token_budget=300), "token_budget"),  # a config's, not a keyword
    (lambda bank: SkillInjectionMiddleware(bank, verifier=check), "verifier"),
    (lambda bank: SkillRecordingMiddleware(bank, k=3), "k"),
    (lambda bank: SkillBankCallbackHandler(bank, max_tokens_per_run=10), "max_tokens_per_run"),
    (lambda bank: RunBudgetMiddleware(clock=lambda: 0.0), "clock"),
    (lambda bank: SkillInjector(bank, verifier=check), "verifier"),
    (lambda bank: skillbank_prompt(bank, max_tokens_per_run=10), "max_tokens_per_run"),
    (lambda bank: inject_skills(bank, [], general_k=0), "general_k"),
])
def test_an_unknown_keyword_is_a_type_error_that_names_it(bank, build, unknown):
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{unknown}'"):
        build(bank)


@pytest.mark.parametrize("build, given", [
    (lambda bank: SkillBankMiddleware(bank, injection=InjectionConfig(k=3), k=4), "k= and injection="),
    (lambda bank: SkillBankMiddleware(bank, recording=RecordingConfig(), verifier=check), "verifier= and recording="),
    (lambda bank: SkillBankMiddleware(bank, budget=BudgetConfig(), max_tokens_per_run=10),
     "max_tokens_per_run= and budget="),
    (lambda bank: SkillBankMiddleware(bank, recording=RecordingConfig(), today="2027-03-08"), "today= and recording="),
    (lambda bank: SkillInjectionMiddleware(bank, InjectionConfig(), reminders=False), "reminders= and injection="),
    (lambda bank: SkillRecordingMiddleware(bank, RecordingConfig(), judge=check), "judge= and recording="),
    (lambda bank: SkillBankCallbackHandler(bank, recording=RecordingConfig(), verifier=check),
     "verifier= and recording="),
    (lambda bank: RunBudgetMiddleware(BudgetConfig(), max_seconds_per_run=1.0), "max_seconds_per_run= and budget="),
    (lambda bank: SkillInjector(bank, InjectionConfig(), k=2), "k= and config="),
    (lambda bank: skillbank_hook(bank, injection=InjectionConfig(), k=2), "skillbank_hook got k= and injection="),
    (lambda bank: inject_skills(bank, [], injection=InjectionConfig(), k=2), "inject_skills got k= and injection="),
])
def test_an_option_given_as_a_keyword_and_in_a_config_is_an_error(bank, build, given):
    with pytest.raises(TypeError, match=f"{given}.*give each option one way"):
        build(bank)


def test_inject_skills_refuses_options_for_an_injector_it_does_not_build(bank):
    with pytest.raises(TypeError, match="SkillInjector and injection= or k="):
        inject_skills(SkillInjector(bank), [HumanMessage("hi")], k=2)


def test_the_middleware_keywords_reach_its_configs(bank):
    live = LiveConfig(holdout=0.1)
    mw = SkillBankMiddleware(bank, k=2, reminders=False, lean=True, examples=True, live=live,
                             today="2027-03-08", verifier=check, max_tokens_per_run=100, max_seconds_per_run=5.0)
    assert (mw.injection.k, mw.injection.reminders, mw.injection.lean, mw.injection.examples) == (2, False, True, True)
    assert mw.injection.live is live and mw.injection.today == mw.recording.today == dt.date(2027, 3, 8)
    assert mw.recording.verifier is check and mw.prompt_middleware.injector.config is mw.injection
    assert mw.budget_middleware is not None
    assert (mw.budget.max_tokens_per_run, mw.budget.max_seconds_per_run) == (100, 5.0)
    assert SkillBankMiddleware(bank, judge=check).recording.judge is check
    # a keyword left out keeps the config's default; the whole configs are taken as they are
    assert SkillBankMiddleware(bank).injection == InjectionConfig()
    injection, recording = InjectionConfig(k=3, token_budget=500), RecordingConfig(verifier=check)
    full = SkillBankMiddleware(bank, injection=injection, recording=recording,
                               budget=BudgetConfig(max_tokens_per_run=9))
    assert full.injection is injection and full.recording is recording and full.budget.max_tokens_per_run == 9


def test_without_a_budget_config_the_budget_keeps_the_recordings_clock(bank):
    def clock() -> float:
        return 0.0

    mw = SkillBankMiddleware(bank, max_seconds_per_run=1.0, recording=RecordingConfig(clock=clock))
    assert mw.budget.clock is clock and mw.budget_middleware.clock is clock


def test_the_other_constructors_keywords_reach_their_configs(bank):
    injection = SkillInjectionMiddleware(bank, k=1, reminders=False, lean=True, examples=True, today="2027-03-08")
    assert (injection.config.k, injection.config.reminders, injection.config.lean, injection.config.examples,
            injection.config.today) == (1, False, True, True, dt.date(2027, 3, 8))
    assert injection.guidance not in [getattr(f, "__self__", None) for f in injection._model_calls]  # reminders off
    assert SkillRecordingMiddleware(bank, verifier=check).recording.verifier is check
    assert SkillBankCallbackHandler(bank, judge=check).recording.judge is check
    budget = RunBudgetMiddleware(max_tokens_per_run=7, max_seconds_per_run=2.0)
    assert (budget.max_tokens_per_run, budget.max_seconds_per_run) == (7, 2.0)
    assert SkillInjector(bank, k=4).config.k == 4
    assert skillbank_prompt(bank, k=4).injector.config.k == 4
    assert skillbank_hook(bank, injection=InjectionConfig(k=6)).injector.config.k == 6


def test_measurement_keywords_set_k_on_a_whole_config_and_survive_a_process_pool():
    config = InjectionConfig(min_score=0.2, deliver={"stated_time": "tool"})
    options = middleware_keywords(3, {"injection": config})
    assert options["injection"].k == 3 and options["injection"].min_score == 0.2 and "k" not in options
    assert middleware_keywords(3, {"reminders": False}) == {"k": 3, "reminders": False}
    assert pickle.loads(pickle.dumps(options["injection"])) == options["injection"]  # worker processes get it
