"""The real path, on the real 0.5B model: llama.cpp through ``LocalChatModel``, the real
``create_agent``, ``SkillBankMiddleware``, an evolution round and a measured trial.

Needs ``pip install 'skillbank[local]'`` and ``skillbank model fetch --size 0.5b``. Skipped
locally when either is missing; in CI (conftest's ``in_ci``) a missing model or runtime is a failure, so
the real path cannot silently stop being tested.
"""

import importlib.util

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import tool
from pydantic import BaseModel

from conftest import unavailable
from skillbank._engines.local.fetch import find_model

pytestmark = pytest.mark.local_model


@pytest.fixture(scope="module", autouse=True)
def real_model_present():
    missing = [what for what, absent in (
        ("llama-cpp-python (pip install 'skillbank[local]')", importlib.util.find_spec("llama_cpp") is None),
        ("the 0.5B model (skillbank model fetch --size 0.5b)", find_model("0.5b") is None)) if absent]
    if missing:
        unavailable(f"{' and '.join(missing)} is missing")


@pytest.fixture(scope="module")
def model(real_model_present):
    from skillbank.chat import resolve_chat_model

    return resolve_chat_model("local:0.5b")


@tool
def get_weather(city: str) -> str:
    """Get the current weather in a city."""
    return f"sunny, 21 C in {city}"


def test_a_tool_call_usage_and_the_prefix_cache(model):
    bound = model.bind_tools([get_weather])
    messages = [SystemMessage("You are a weather assistant."),
                HumanMessage("What's the weather in Paris?")]
    first = bound.invoke(messages, seed=1, temperature=0)
    assert [c["name"] for c in first.tool_calls] == ["get_weather"]
    assert first.tool_calls[0]["args"].get("city", "").lower() == "paris"
    usage = first.usage_metadata
    assert usage["input_tokens"] > 50 and usage["output_tokens"] > 0
    again = bound.invoke(messages, seed=1, temperature=0)
    # the same prompt again: every whole batch before the last prompt token comes from the KV
    # cache, and the reply is the same
    whole = (usage["input_tokens"] - 1) // model.n_batch * model.n_batch
    assert again.usage_metadata["input_token_details"]["cache_read"] == whole > 0
    assert again.response_metadata["raw_text"] == first.response_metadata["raw_text"]


def test_a_seeded_reply_does_not_depend_on_what_the_context_held(model):
    # Sampled, at the model's own temperature: read partly from the cache, a prompt used to come
    # out different from the same prompt read fresh (llama.cpp's numbers depend on how a prompt
    # is cut into batches), so the same seed gave another reply after another conversation.
    bound = model.bind_tools([get_weather])
    system = SystemMessage("You are a weather assistant. Answer briefly.")
    asked = [system, HumanMessage("What's the weather like in Paris and in Rome today?")]
    other = [system, HumanMessage("Thanks, that helps a lot.")]
    fresh = bound.model_copy(update={"reuse_prefix": False})
    for seed in range(6):
        alone = fresh.invoke(asked, seed=seed).response_metadata["raw_text"]
        bound.invoke(other, seed=100 + seed)
        after_other = bound.invoke(asked, seed=seed)
        assert after_other.usage_metadata["input_token_details"]["cache_read"] > 0
        assert after_other.response_metadata["raw_text"] == alone, seed


def test_structured_output_is_grammar_constrained(model):
    class Verdict(BaseModel):
        success: bool
        reason: str

    out = model.with_structured_output(Verdict).invoke("Is 2 + 2 = 4? Judge it.")
    assert isinstance(out, Verdict) and out.reason


def test_the_loop_on_the_real_model(tmp_path, model):
    from skillbank import SkillBank
    from skillbank_harness import envs
    from skillbank_harness.envs.measure import ARM_WITH, ARM_WITHOUT, measure_env
    from skillbank.evolution import evolve

    tasks = [t for t in envs.generate_tasks(["simple"], per_template=1, seed=0,
                                            templates=["simple.base.smalltalk_greeting",
                                                       "simple.base.two_cities"])
             if not t.budget or t.template == "simple.base.two_cities"]  # two_cities: budget only
    assert len(tasks) == 2

    def factory(task, seed):
        return model.with_seed(seed)

    with SkillBank.open(tmp_path / "bank", embedder="hash") as bank:
        baseline = measure_env(tasks, factory, trials=1, bank=bank, arms=(ARM_WITHOUT,),
                               concurrency=1, progress=False, model=model.model_name)
        stored = bank.trajectories.list(labels={"run": baseline.run_id}, with_steps=True, limit=None)
        assert len(stored) == 2 and all(t.success is not None for t in stored)
        assert all(t.model_turns >= 1 and t.input_tokens > 0 for t in stored)  # logged by the middleware
        report = evolve(bank, promote_policy="all")
        assert report.trajectories == 1  # small talk is a held-out template: evolution leaves it out
        measured = measure_env(tasks, factory, trials=1, bank=bank, arms=(ARM_WITH,),
                               concurrency=1, progress=False, model=model.model_name)
        (record, *_) = measured.records
        assert record.tokens > 0 and record.latency_s > 0 and record.model_turns >= 1
        # the figure is the stored outcomes' own: each record's success is its trajectory's label,
        # and pass^1 over two tasks of one trial is their mean
        with_records = [r for r in measured.records if r.arm == ARM_WITH]
        assert len(with_records) == 2
        labelled = {t.id: t.success for t in bank.trajectories.list(labels={"run": measured.run_id},
                                                                    limit=None)}
        assert [labelled[r.trajectory_id] for r in with_records] == [r.success for r in with_records]
        assert measured.headline()[ARM_WITH]["pass^1"] == sum(r.success for r in with_records) / 2


def test_your_agent_from_the_command_line(tmp_path, monkeypatch):
    """The README's example: examples/local_agent.py on its task file, one trial per arm."""
    import json
    from pathlib import Path

    from typer.testing import CliRunner

    from skillbank.cli import app

    root = Path(__file__).resolve().parents[2]
    monkeypatch.setenv("SKILLBANK_EXAMPLE_MODEL", "local:0.5b")
    result = CliRunner().invoke(app, [
        "eval", "--agent", f"{root / 'examples' / 'local_agent.py'}:build",
        "--tasks", str(root / "examples" / "local_tasks.jsonl"), "--trials", "1",
        "-d", str(tmp_path / "bank"), "--embedder", "hash", "--json", "-"])
    assert result.exit_code == 0, result.output
    (res,) = json.loads(result.stdout)["results"].values()
    assert len(res["records"]) == 12 and all(r["tokens"] > 0 for r in res["records"])


def test_the_llm_distiller_on_the_real_models_output(tmp_path, model):
    """The LLM distiller fed what the 0.5B model really writes (the other distiller tests script
    the reply): the reply parses, every skill it yields passed lint and names only tools the runs
    used, and whatever is refused says why."""
    from skillbank import SkillBank
    from skillbank.evolution import LLMDistiller, evolve
    from test_evolution_support import refund

    with SkillBank.open(tmp_path / "bank", embedder="hash") as bank:
        for i in range(3):
            bank.trajectories.save(refund(i))
        report = evolve(bank, distiller=LLMDistiller(model), promote_policy="all")
        assert report.trajectories == 3
        assert report.usage.calls >= 1 and report.usage.output_tokens > 0  # the model was asked
        assert report.usage.failures == []  # its replies parsed (grammar-constrained output)
        # Whether the 0.5B proposes anything varies (it proposed nothing on 2026-12-01): what
        # must hold is that its real reply parsed, and that whatever it yields is sound.
        used = {"find_order", "check_refund_policy", "issue_refund"}
        for skill in bank.list_skills():
            assert set(skill.tools) <= used, (skill.name, skill.tools)
            assert skill.body.strip() and skill.description.strip()
        for change in report.rejected:
            assert change.note, change
        assert bank.verify().ok
