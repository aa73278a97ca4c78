"""SizedIndex: exact search up to a size, HNSW above, and back; the exact path's filters."""

import numpy as np
import pytest

from skillbank import SkillBank
from skillbank.queries import SearchFilters
from skillbank.store._index import ExactIndex, SizedIndex
from skillbank.store._sized_index import _exact_max


def _fill(bank, start, n):
    with bank.store.transaction():
        return [bank.add_skill(name=f"s-{i}", description=f"skill {i} about topic {i % 5}", body="b",
                               kind="policy" if i % 2 else "procedure", tags=[f"t{i % 3}"],
                               tools=[f"tool_{i % 4}"]) for i in range(start, start + n)]


def test_switches_to_hnsw_above_the_size_and_back(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLBANK_EXACT_MAX", "40")
    with SkillBank.open(tmp_path / "bank", embedder="hash") as bank:
        first = _fill(bank, 0, 30)
        assert bank.search("skill 7 about topic 2", k=1)[0].skill.name == "s-7"
        assert isinstance(bank.index, SizedIndex) and bank.index.mode == "exact"
        assert not (tmp_path / "bank" / "index" / "chroma.sqlite3").exists()  # Chroma never loaded
        _fill(bank, 30, 300)  # past the dirty limit too: the next search syncs
        assert bank.search("skill 201 about topic 1", k=1)[0].skill.name == "s-201"
        assert bank.index.mode == "hnsw" and (tmp_path / "bank" / "index" / "chroma.sqlite3").exists()
        assert bank.verify().ok
        for s in bank.list_skills(status="active")[:300]:
            bank.retire(s.id, reason="thinning")
        bank.sync_index()
        assert bank.index.mode == "exact" and bank.verify().ok
        left = {s.id for s in bank.list_skills(status="active")}
        assert set(bank.index.entries()) == left and len(left) == 30
    with SkillBank.open(tmp_path / "bank", embedder="hash") as again:  # a new process's view
        assert {h.skill.id for h in again.search("skill about topic", k=50)} <= left
        assert again.index.mode == "exact"
    assert first  # (the skills were added)


def test_exact_filters_apply_before_ranking(tmp_path):
    with SkillBank.open(tmp_path / "bank", embedder="hash") as bank:
        _fill(bank, 0, 60)
        bank.sync_index()
        index = bank.index.current
        assert isinstance(index, ExactIndex)
        v = bank.embedder.embed_query("skill 3 about topic 3")
        skills = {s.id: s for s in bank.list_skills(status="active")}
        # A narrow filter: the index returns only what it allows, all of it when few match.
        hits = index.query(v, 100, SearchFilters(kinds=["policy"], tags=["T1"], tools=["tool_1"]))
        expect = {i for i, s in skills.items()
                  if s.kind.value == "policy" and "t1" in s.tags and "tool_1" in s.tools}
        assert {h.skill_id for h in hits} == expect and expect
        sims = [h.similarity for h in hits]
        assert sims == sorted(sims, reverse=True)
        gone = [h.skill_id for h in index.query(v, 3)]
        hits = index.query(v, 3, SearchFilters(exclude=gone))
        assert not set(gone) & {h.skill_id for h in hits} and len(hits) == 3
        assert index.query(v, 5, SearchFilters(tags=["no-such-tag"])) == []
        # each hit's vector is the stored one
        for h in index.query(v, 5):
            assert np.isclose(float(h.vector @ v), h.similarity, atol=1e-6)


def test_exact_max_setting_is_checked(monkeypatch):
    monkeypatch.setenv("SKILLBANK_EXACT_MAX", "lots")
    with pytest.raises(ValueError, match="SKILLBANK_EXACT_MAX must be a whole number"):
        _exact_max()
    monkeypatch.setenv("SKILLBANK_EXACT_MAX", "-1")
    with pytest.raises(ValueError, match="0 or more"):
        _exact_max()
