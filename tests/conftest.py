import os

# Never reach a model hub: every model skillbank loads ships inside a package.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import pytest  # noqa: E402

from skillbank import SkillBank  # noqa: E402


@pytest.fixture
def bank(tmp_path):
    """A real bank (SQLite file + Chroma directory) with the deterministic hash embedder."""
    b = SkillBank.open(tmp_path / "bank", embedder="hash")
    yield b
    b.close()


def add_sample_skills(bank):
    """A few distinct skills used across tests."""
    return [
        bank.add_skill(
            name="decline-missing-tool",
            description="When a needed tool is not available, such as the window tool",
            body="Do the possible part, decline the rest and name the missing tool.",
            kind="guard", tools=["open_window"], tags=["car"],
        ),
        bank.add_skill(
            name="check-battery-first",
            description="Before starting climate control, check the battery level",
            body="Always call `get_battery` before `start_climate`.",
            kind="policy", tools=["get_battery", "start_climate"], tags=["car"],
        ),
        bank.add_skill(
            name="refund-after-eligibility",
            description="Refund an order only after checking refund eligibility",
            body="Look up the order, check eligibility, then refund.",
            kind="procedure", tools=["lookup_order", "check_eligibility", "refund"], tags=["retail"],
        ),
    ]
