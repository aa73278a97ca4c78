"""SIGKILL in the middle of an evolution round (hardening, item 2)."""

from __future__ import annotations

import pytest

from test_hardening_support import KILL_POINTS, crash_evolution


@pytest.mark.slow
def test_kill_9_during_evolution_rounds_never_half_writes(tmp_path):
    result = crash_evolution(str(tmp_path / "bank"), attempts=12, seed=11, families=120)
    assert result["failures"] == []
    # every attempt died at its named step, and every step was a kill point twice
    assert result["killed"] == 12 and sorted(result["points"]) == sorted(list(KILL_POINTS) * 2)
    assert result["versions"] > 0 and result["final_round"] >= 1


# A run killed inside its very first model call: the model blocks until it is killed.
FIRST_CALL_CHILD = """
import sys, time
from langchain.agents import create_agent
from skillbank import SkillBank
from skillbank.adapters.callbacks import SkillBankCallbackHandler
from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters.testing import ScriptedChatModel

def hang(messages):
    print("in model", flush=True)
    time.sleep(600)

bank = SkillBank.open(sys.argv[1], embedder="hash")
middleware, config = [], {"metadata": {"skillbank_labels": {"arm": "crash"}}}
if sys.argv[2] == "middleware":
    middleware = [SkillBankMiddleware(bank, inject=False)]
else:
    config["callbacks"] = [SkillBankCallbackHandler(bank)]
agent = create_agent(ScriptedChatModel([hang]), [], middleware=middleware)
agent.invoke({"messages": [("user", "open the sunroof halfway")]}, config=config)
"""


@pytest.mark.parametrize("recorder", ["middleware", "callbacks"])
def test_kill_9_inside_the_first_model_call_leaves_a_running_row(tmp_path, recorder):
    import signal
    import subprocess
    import sys

    from skillbank import SkillBank

    path = str(tmp_path / "bank")
    SkillBank.open(path, embedder="hash").close()
    proc = subprocess.Popen([sys.executable, "-c", FIRST_CALL_CHILD, path, recorder],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "in model"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    with SkillBank.open(path, embedder="hash") as bank:
        runs = bank.trajectories.list(with_steps=True)
        assert len(runs) == 1, "the killed run left no trajectory row"
        traj = runs[0]
        assert traj.status == "running" and traj.ended_at is None  # started, never finished
        assert traj.task == "open the sunroof halfway" and traj.labels == {"arm": "crash"}
        assert traj.steps == []  # the model call in flight is lost, nothing more
        assert [t.id for t in bank.trajectories.list(status="running")] == [traj.id]
