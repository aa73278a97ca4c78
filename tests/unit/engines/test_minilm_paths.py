"""The bundled MiniLM embedder where users meet it: the default bank offline, and an evolution
round (the other evolution tests use the hash embedder)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from skillbank import SkillBank
from skillbank.evolution import evolve
from test_evolution_support import refund, window

pytestmark = pytest.mark.model

DEFAULT_BANK = """
import json, sys
from skillbank import SkillBank
bank = SkillBank.open(sys.argv[1])  # no embedder given: the default
bank.add_skill("cool-the-cabin", "Lower the car's temperature with the climate control",
               "Call `set_climate` with the target temperature.", tools=["set_climate"])
bank.add_skill("refund-damaged-order", "Refund an order that arrived broken",
               "Look the order up, check eligibility, then refund.", tools=["issue_refund"])
small = [h.skill.name for h in bank.search("it is boiling hot inside my vehicle", k=2)]
# a reindex of many skills goes through the bulk (sentence-transformers) path
bulk = bank.embedder.embed([f"skill {i}" for i in range(bank.embedder.BULK)])
print(json.dumps({"embedder": bank.embedder.name, "small": small, "bulk": [len(bulk), len(bulk[0])]}))
"""


def test_the_default_bank_embeds_with_minilm_without_a_network(tmp_path):
    """No embedder given, no hub flag set, and every connection refused: the bundled model
    needs neither (a hub call would fail through the dead proxy)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "SKILLBANK_EMBEDDER")}
    dead = "http://127.0.0.1:9"  # the discard port: nothing listens
    env.update(HTTP_PROXY=dead, HTTPS_PROXY=dead, http_proxy=dead, https_proxy=dead, NO_PROXY="",
               HF_HOME=str(tmp_path / "hf-home"))
    proc = subprocess.run([sys.executable, "-c", DEFAULT_BANK, str(tmp_path / "bank")], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["embedder"] == "minilm-l6-v2"
    assert out["small"][0] == "cool-the-cabin"  # by meaning: the query shares no word with it
    assert out["bulk"] == [256, 384]


def test_an_evolution_round_with_minilm(tmp_path):
    with SkillBank.open(tmp_path / "bank", embedder="minilm") as bank:
        for i in range(3):
            bank.trajectories.save(refund(i))
        for i in range(2):
            bank.trajectories.save(window(i))
        report = evolve(bank, promote_policy="all")
        assert report.trajectories == 5
        active = {c.skill for c in report.changes if c.status == "active"}
        assert "when-open-window-is-unavailable" in active
        procedure = next(n for n in active if n.startswith("refund-order"))
        # the learned skills are found by requests in other words
        hits = bank.search("my parcel came smashed, I want my money back", k=1)
        assert [h.skill.name for h in hits] == [procedure]
        assert bank.verify().ok
