"""The store conformance suite: one set of tests, run on every backend.

In the manner of LangGraph's checkpointer conformance tests: ``any_bank`` (conftest.py) is a
real bank on SQLite (file + Chroma), on PostgreSQL with pgvector, and on PostgreSQL without the
extension (exact search over the cached embeddings). Every guarantee the README promises is
checked here once and holds on all three.
"""

from __future__ import annotations

import datetime
import json
import logging
import multiprocessing
import sqlite3
import threading
from pathlib import Path

import pydantic
import pytest

from skillbank import SkillBank
from skillbank.errors import DuplicateSkillError, LockedError, SchemaTooNewError
from skillbank.evolution import evolve, evolution_lock
from skillbank.evolution._batch import load_batch
from skillbank.models import Outcome, Step, Trajectory, utcnow
from skillbank.queries import SolvedRequest
from skillbank._splits import HELD_OUT_SPLITS
from skillbank.store._compat import READERS_MUST_KNOW
from skillbank.store._schema import BREAKS_OLDER_CODE, KNOWN_MIGRATIONS, OLDER_CODE_CAN_USE, POSTGRES_MIGRATIONS
from skillbank.store._skills import _CONTENT_COLUMNS, _STATE_COLUMNS
from test_evolution_support import refund, traj, window


def _add(bank, name, description, **kw):
    return bank.add_skill(name=name, description=description, body=kw.pop("body", f"Do {name}."), **kw)


def _tamper(bank, sql, params=()):
    """Edit a row behind the repositories' back, as an attacker with database access would."""
    with bank.store.transaction() as conn:
        conn.execute(sql, params)


# -- migrations ------------------------------------------------------------------------------------


def test_both_backends_know_the_same_migrations():
    assert {name for name, _ in POSTGRES_MIGRATIONS} == KNOWN_MIGRATIONS
    assert set(OLDER_CODE_CAN_USE) == KNOWN_MIGRATIONS  # each says whether older code can use it


def test_migrations_are_recorded_and_reopening_is_idempotent(any_bank, backend_target):
    if any_bank.store.backend == "sqlite":
        names = {r["name"] for r in any_bank.store.query("SELECT name FROM _sqlite_migrations")}
    else:
        names = set(any_bank.store.applied_migrations())
    assert names == KNOWN_MIGRATIONS
    _add(any_bank, "kept", "survives a reopen")
    any_bank.close()
    with SkillBank.open(backend_target, embedder="hash") as again:
        again.store.setup()
        assert [s.name for s in again.list_skills()] == ["kept"]


# -- rolling upgrades: a bank a newer release migrated ---------------------------------------------

FUTURE = "9999_future"  # a migration of a release newer than this code


def _migrations_table(bank):
    return "_sqlite_migrations" if bank.store.backend == "sqlite" else "skillbank_migrations"


def _migrate_as_a_newer_release(bank, *, readers_must_know):
    """Leave the bank as a newer release with the migration :data:`FUTURE` leaves it: the name among
    the applied ones, and its record of what readers must know (``None``: no record, as a release
    from before the record left it)."""
    if bank.store.backend == "sqlite":
        _tamper(bank, "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES ('skillbank', ?, 'x')",
                (FUTURE,))
    else:
        _tamper(bank, "INSERT INTO skillbank_migrations (name, applied_at) VALUES (?, 'x')", (FUTURE,))
    if readers_must_know is None:
        bank.store.delete_meta(READERS_MUST_KNOW)
    else:
        bank.store.set_meta(READERS_MUST_KNOW, json.dumps(sorted(readers_must_know)))


def _before_0005(bank):
    """Back to the schema of the release before 0005 (its column dropped, its record deleted)."""
    with bank.store.transaction() as conn:
        conn.execute("ALTER TABLE trajectories DROP COLUMN today")
        conn.execute(f"DELETE FROM {_migrations_table(bank)} WHERE name = ?", ("0005_trajectory_today",))


def _readers_must_know(bank):
    raw = bank.store.get_meta(READERS_MUST_KNOW)
    return None if raw is None else json.loads(raw)


def _as_stored(target):
    """The applied migrations, meta and the trajectories' columns, read past skillbank: a refused
    bank cannot be opened to look, and reading must write nothing."""
    if isinstance(target, Path):
        conn = sqlite3.connect(target / "bank.db")
        migrations, columns = "_sqlite_migrations", "SELECT name FROM pragma_table_info('trajectories')"
    else:
        import psycopg

        conn = psycopg.connect(target)
        migrations = "skillbank_migrations"
        columns = "SELECT column_name FROM information_schema.columns WHERE table_name = 'trajectories'"
    try:
        return {"migrations": sorted(conn.execute(f"SELECT name, applied_at FROM {migrations}").fetchall()),
                "meta": sorted(conn.execute("SELECT key, value FROM meta").fetchall()),
                "trajectory columns": sorted(r[0] for r in conn.execute(columns).fetchall())}
    finally:
        conn.close()


def test_a_new_bank_records_what_readers_must_know_and_reopening_changes_nothing(any_bank, backend_target):
    assert _readers_must_know(any_bank) == sorted(BREAKS_OLDER_CODE) == [
        "0001_initial", "0002_lessons_and_toolset", "0003_drafts_and_rounds"]
    any_bank.close()
    stored = _as_stored(backend_target)
    with SkillBank.open(backend_target, embedder="hash") as again:
        again.store.setup()
    assert _as_stored(backend_target) == stored


def test_a_newer_release_s_migration_older_code_can_use_is_tolerated(any_bank, backend_target, caplog):
    """A newer release applied a migration this code does not know, and recorded that readers need
    not know it (a new nullable column, say): hosts still on this release keep using the bank."""
    kept = _add(any_bank, "kept", "written before the newer release came")
    _migrate_as_a_newer_release(any_bank, readers_must_know=BREAKS_OLDER_CODE)
    any_bank.close()
    stored = _as_stored(backend_target)

    with caplog.at_level(logging.INFO, logger="skillbank.store"):
        bank = SkillBank.open(backend_target, embedder="hash")
    with bank:
        assert FUTURE in caplog.text and "newer skillbank" in caplog.text
        assert bank.get_skill(kept.id).name == "kept"
        added = _add(bank, "added", "written after it")
        run = bank.trajectories.save(refund(0, skill=added))
        assert bank.trajectories.get(run).outcome.success
        assert bank.get_skill(added.id).stats.uses == 1
        assert [h.skill.name for h in bank.search("written after it", k=1)] == ["added"]
        assert bank.verify(check_index=False).ok
    after = _as_stored(backend_target)
    assert after["migrations"] == stored["migrations"]  # nothing applied, the record not rewritten
    assert dict(after["meta"])[READERS_MUST_KNOW] == dict(stored["meta"])[READERS_MUST_KNOW]


def test_a_newer_release_s_migration_that_breaks_older_code_is_refused_untouched(any_bank, backend_target):
    _add(any_bank, "kept", "written before the newer release came")
    _before_0005(any_bank)  # one of this code's own migrations pending: refusing must not apply it
    _migrate_as_a_newer_release(any_bank, readers_must_know=BREAKS_OLDER_CODE | {FUTURE})
    any_bank.close()
    stored = _as_stored(backend_target)

    with pytest.raises(SchemaTooNewError) as refused:
        SkillBank.open(backend_target, embedder="hash")
    message = str(refused.value)
    assert "newer skillbank" in message and FUTURE in message and "0003" not in message
    assert "Upgrade skillbank on this host (pip install -U skillbank)" in message and "untouched" in message
    assert _as_stored(backend_target) == stored
    assert "today" not in stored["trajectory columns"]


def test_a_newer_release_that_recorded_nothing_is_refused_as_before(any_bank, backend_target):
    """Unknown migrations and no record: the bank was migrated by a release from before the
    record, which said nothing about whether older code can use it."""
    _migrate_as_a_newer_release(any_bank, readers_must_know=None)
    any_bank.close()
    stored = _as_stored(backend_target)
    with pytest.raises(SchemaTooNewError, match=f"newer skillbank.*{FUTURE}.*does not record"):
        SkillBank.open(backend_target, embedder="hash")
    assert _as_stored(backend_target) == stored


def test_opening_a_bank_from_before_0005_applies_it_and_records_what_readers_must_know(any_bank, backend_target):
    """A bank as the release before 0005, from before the record, left it."""
    _before_0005(any_bank)
    any_bank.store.delete_meta(READERS_MUST_KNOW)
    any_bank.close()

    with SkillBank.open(backend_target, embedder="hash") as bank:
        assert {name for name, _ in _as_stored(backend_target)["migrations"]} == KNOWN_MIGRATIONS
        assert _readers_must_know(bank) == sorted(BREAKS_OLDER_CODE)
        dated = bank.trajectories.save(refund(0).model_copy(update={"today": datetime.date(2027, 3, 8)}))
        assert bank.trajectories.get(dated).today == datetime.date(2027, 3, 8)


def test_a_bank_written_before_drafts_had_tables_keeps_its_drafts_and_rounds(any_bank, backend_target):
    """Migration 0003 moves the meta keys drafts, pending candidates and the round watermark were
    kept under into their tables: the bank is written here as the release before wrote it."""
    target = _add(any_bank, "refund-order", "Refund an order")
    draft = _add(any_bank, "refund-order-next", "Refund an order, checked first", status="candidate")
    new = _add(any_bank, "check-stock", "Check the stock first", status="candidate")
    migrations = "_sqlite_migrations" if any_bank.store.backend == "sqlite" else "skillbank_migrations"
    with any_bank.store.transaction() as conn:  # back to the schema before 0003 ...
        for table in ("pending_candidates", "drafts", "evolution_rounds"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute(f"DELETE FROM {migrations} WHERE name = ?", ("0003_drafts_and_rounds",))
    edit = {"kind": "update", "target": target.id, "name": target.name, "evidence": ["tr_1"],
            "task_ids": ["t1"], "reason": "checks first", "author": "evolution:rule", "round": 3}
    old_keys = {  # ... and its meta keys, as that release wrote them
        f"evolution:pending:{draft.id}": json.dumps(edit, sort_keys=True),
        f"evolution:draft:{target.id}": draft.id,
        f"evolution:pending:{new.id}": json.dumps({"kind": "add", "evidence": ["tr_2"], "round": 3}),
        "evolution:round": "3",
        "evolution:last_run": json.dumps({"round": 3, "at": "2025-01-02T03:04:05+00:00",
                                          "trajectories": 7}),
    }
    for key, value in old_keys.items():
        any_bank.store.set_meta(key, value)
    any_bank.close()

    with SkillBank.open(backend_target, embedder="hash") as bank:
        from skillbank.evolution._review import get_pending, list_candidates
        from skillbank.store._rounds import RoundRepo

        assert bank.drafts.draft_for(target.id) == draft.id
        pending = get_pending(bank, target.name)  # an active skill's pending version is its draft
        assert pending.skill.id == draft.id and pending.target == target.id
        assert pending.reason == "checks first" and pending.evidence == ["tr_1"]
        assert {p.skill.id: p.kind for p in list_candidates(bank)} == {draft.id: "update", new.id: "add"}
        assert draft.id not in {s.id for s in bank.list_skills()}  # a draft is not a skill of its own
        assert bank.rounds.current() == 3
        last = RoundRepo(bank.store).last()
        assert (last.finished_at, last.trajectories) == ("2025-01-02T03:04:05+00:00", 7)
        assert bank.store.meta_items("evolution:") == {}
        assert evolve(bank).round == 4


# -- skills, versions, the change log ----------------------------------------------------------------


def test_versions_are_immutable_and_content_hashed(any_bank):
    s = _add(any_bank, "check-battery", "Check the battery first", tools=["get_battery"], tags=["Car"])
    any_bank.update_skill(s.id, body="Call get_battery before start_climate.", reason="sharper")
    any_bank.update_skill(s.id, body="Call get_battery before start_climate.", reason="no-op")  # writes nothing
    history = any_bank.history(s.id)
    assert [v.version for v in history] == [1, 2]
    assert all(v.content.hash() == v.content_hash for v in history)
    assert history[1].parent_hash == history[0].content_hash
    assert history[0].content.tags == ("car",) and history[0].content.tools == ("get_battery",)
    assert "+Call get_battery" in any_bank.diff(s.id, 1, 2)
    rolled = any_bank.rollback(s.id, 1)
    assert rolled.version == 3 and rolled.content_hash == history[0].content_hash
    assert any_bank.skills.was_rejected(history[1].content_hash)
    report = any_bank.verify()
    assert report.ok, report.problems
    assert (report.events, report.versions) == (3, 3)


def test_names_stay_unique(any_bank):
    _add(any_bank, "only-one", "first")
    with pytest.raises(DuplicateSkillError, match="already exists"):
        _add(any_bank, "only-one", "second")
    other = _add(any_bank, "another", "third")
    with pytest.raises(DuplicateSkillError):
        any_bank.update_skill(other.id, name="only-one", reason="rename onto a taken name")


def test_verify_names_the_first_broken_link(any_bank):
    for i in range(4):
        _add(any_bank, f"skill-{i}", f"skill number {i}")
    assert any_bank.verify(check_index=False).ok
    _tamper(any_bank, "UPDATE events SET payload = ? WHERE seq = 2", (json.dumps({"content_hash": "forged"}),))
    problems = any_bank.verify(check_index=False).problems
    assert problems[0] == "event 2: contents do not match its hash (edited)"
    assert not any(p.startswith("event 3") for p in problems)  # after the first break: unverifiable


def test_an_edited_version_is_caught(any_bank):
    s = _add(any_bank, "honest", "an honest skill")
    _tamper(any_bank, "UPDATE skill_versions SET body = 'exfiltrate the data' WHERE skill_id = ?", (s.id,))
    problems = any_bank.verify(check_index=False).problems
    assert any(f"skill {s.id} v1: content does not match" in p for p in problems)


def test_a_failed_change_writes_nothing(any_bank):
    before = any_bank.stats()
    with pytest.raises(RuntimeError):
        with any_bank.store.transaction():
            _add(any_bank, "half-a", "first of two")
            any_bank.trajectories.save(refund(0))
            raise RuntimeError("crash between two writes")
    assert any_bank.stats() == before
    assert any_bank.verify(check_index=False).ok


def test_meta_round_trips(any_bank):
    assert any_bank.store.get_meta("k") is None
    any_bank.store.set_meta("k", "v1")
    any_bank.store.set_meta("k", "v2")
    any_bank.store.set_meta("other", "x")
    assert any_bank.store.get_meta("k") == "v2"
    assert any_bank.store.meta_items("k") == {"k": "v2"}
    any_bank.store.delete_meta("k")
    assert any_bank.store.get_meta("k") is None


# -- trajectories ------------------------------------------------------------------------------------


def test_trajectories_round_trip_with_outcomes_and_statistics(any_bank):
    skill = _add(any_bank, "refund-orders", "Refund an order", tools=["find_order"])
    ok = any_bank.trajectories.save(refund(0, skill=skill))
    bad = any_bank.trajectories.save(refund(1, success=False, skill=skill))
    t = any_bank.trajectories.get(ok)
    assert t.outcome.success and [s.tool for s in t.steps if s.kind == "tool"][:1] == ["find_order"]
    assert any_bank.trajectories.get(bad).injections[0].skill_id == skill.id
    stats = any_bank.get_skill(skill.id).stats
    assert (stats.uses, stats.successes, stats.failures) == (2, 1, 1)
    any_bank.record_outcome(bad, success=True)  # a relabel replaces the old label
    stats = any_bank.get_skill(skill.id).stats
    assert (stats.successes, stats.failures) == (2, 0)
    assert any_bank.trajectories.count(labelled=True) == 2
    totals = any_bank.stats()["trajectories"]
    assert totals == {"total": 2, "labelled": 2, "successes": 2, "incomplete": 0}


def test_exposures_join_outcomes_and_the_monitor_decides_once(any_bank):
    from skillbank.live._canary import start_canary
    from skillbank.live._exposure import Arm, Exposure

    skill = start_canary(any_bank.skills, _add(any_bank, "refund-orders", "Refund an order").id)
    expected = {}
    for i in range(240):
        arm = Arm.shown if i % 2 else Arm.held
        tid = any_bank.trajectories.save(refund(i, success=arm == Arm.shown or i % 6 == 0))
        expected[tid] = arm == Arm.shown or i % 6 == 0
        any_bank.exposures.record(tid, [Exposure(skill.id, skill.version, arm, 0.5)])
        any_bank.exposures.record(tid, [Exposure(skill.id, skill.version, Arm.shown, 0.5)])  # the first arm stays
    runs = any_bank.exposures.runs([skill.id])
    assert len(runs) == 240 and sum(r.exposure.arm == "held" for r in runs) == 120
    assert {r.exposure.run_id: r.success for r in runs} == expected
    assert [(s.action.value, s.skill_id) for s in any_bank.monitor(apply=True).decisions] == [("promote", skill.id)]
    assert any_bank.history(skill.id)[-1].author == "monitor" and "canary" not in any_bank.get_skill(skill.id).tags
    assert any_bank.monitor(apply=True).decisions == [] and any_bank.verify(check_index=False).ok
def test_browsing_runs_pages_and_filters_over_every_run(any_bank):
    """The runs page's query: paged and filtered in SQL over all runs, not the newest few."""
    from skillbank.models import LimitEvent, LimitType

    skill = _add(any_bank, "refund-orders", "Refund an order", tools=["find_order"])
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    ids = []
    for i in range(7):
        run = refund(i, success=(i % 2 == 0), skill=skill if i < 3 else None)
        run = run.model_copy(update={"started_at": start + datetime.timedelta(minutes=i)})
        if i == 1:
            run.limit_events = [LimitEvent(type=LimitType.missing_tool, step=0, detail="no refund tool")]
        ids.append(any_bank.trajectories.save(run))
    newest_first = list(reversed(ids))
    first = any_bank.trajectories.browse(limit=3)
    second = any_bank.trajectories.browse(offset=3, limit=3)
    assert first.total == 7 and [r.id for r in first.runs] == newest_first[:3]
    assert [r.id for r in second.runs] == newest_first[3:6] and second.runs[0].steps
    assert any_bank.trajectories.browse(outcome="failure").total == 3
    assert [r.id for r in any_bank.trajectories.browse(limit_type="missing_tool").runs] == [ids[1]]
    by_skill = any_bank.trajectories.browse(skill_ids=[skill.id], outcome="success")
    assert sorted(r.id for r in by_skill.runs) == sorted([ids[0], ids[2]]) and by_skill.total == 2
    assert any_bank.trajectories.browse(skill_ids=[]).total == 0
    assert [r.id for r in any_bank.trajectories.browse(ids=[ids[4], "tr_none"]).runs] == [ids[4]]
    with pytest.raises(ValueError, match="success, failure, unlabelled"):
        any_bank.trajectories.browse(outcome="maybe")


def test_a_run_keeps_the_today_it_took_and_a_round_reads_it(any_bank):
    """What "tomorrow" meant to a run (a stated_date lesson is learned from it), on both backends."""
    dated = any_bank.trajectories.save(refund(0).model_copy(update={"today": datetime.date(2027, 3, 8)}))
    undated = any_bank.trajectories.save(refund(1))
    assert any_bank.trajectories.get(dated).today == datetime.date(2027, 3, 8)
    assert any_bank.trajectories.get(undated).today is None
    runs = {r.id: r for r in load_batch(any_bank).runs}
    assert runs[dated].today == datetime.date(2027, 3, 8) and runs[undated].today is None


def test_solved_requests_are_the_newest_successes_with_whether_they_called_a_tool(any_bank):
    called = any_bank.trajectories.save(refund(0))
    failed = any_bank.trajectories.save(refund(1, success=False))
    chat = any_bank.trajectories.save(traj("thanks, that was quick!", [], success=True, answer="Any time!"))
    running = Trajectory(task="open the sunroof")  # unfinished and unlabelled: not solved
    any_bank.trajectories.start(running)
    texts = {t: any_bank.trajectories.get(t).task for t in (called, failed, chat)}
    assert any_bank.solved_requests() == [SolvedRequest(texts[chat], False), SolvedRequest(texts[called], True)]
    assert any_bank.solved_requests(limit=1) == [SolvedRequest(texts[chat], False)]  # newest first


def test_reading_many_skills_shows_every_change_and_shares_what_did_not_change(any_bank):
    one = _add(any_bank, "refund-orders", "Refund an order", tools=["find_order"])
    two = _add(any_bank, "cancel-orders", "Cancel an order")
    first = any_bank.skills.get_many([one.id, two.id, one.id, "no-such-id"])
    assert sorted(first) == sorted([one.id, two.id])
    assert any_bank.skills.get_many([one.id])[one.id] is first[one.id]  # unchanged: the same snapshot
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        first[one.id].status = "retired"  # a shared snapshot cannot be changed behind the bank's back
    # A read is rebuilt when its state columns change and its content is keyed by the content
    # columns: every column of the table must be one or the other, or a change goes unseen.
    columns = set(any_bank.store.query("SELECT * FROM skills")[0])
    assert columns == set(_STATE_COLUMNS) | set(_CONTENT_COLUMNS)

    any_bank.trajectories.save(refund(0, skill=one))  # usage counts change without a version
    any_bank.update_skill(two.id, body="Cancel it, then say so.", reason="clearer")
    any_bank.retire(one.id, reason="superseded")
    now = any_bank.skills.get_many([one.id, two.id])
    assert now[one.id].stats.uses == 1 and now[one.id].status == "retired"
    assert now[two.id].body == "Cancel it, then say so." and now[two.id].version == 2
    assert first[one.id].stats.uses == 0 and first[two.id].version == 1  # old snapshots stay as read
    assert now == {i: any_bank.get_skill(i) for i in (one.id, two.id)}


def test_an_unfinished_run_keeps_its_steps_and_its_model(any_bank):
    t = Trajectory(task="open the sunroof", labels={"arm": "with"})
    any_bank.trajectories.start(t)
    any_bank.trajectories.append(t.id, [Step(index=0, kind="model", started_at=utcnow(), content="thinking",
                                             input_tokens=7, output_tokens=3)], model="scripted")
    running = any_bank.trajectories.list(status="running", with_steps=True)
    assert [r.id for r in running] == [t.id] and running[0].model == "scripted"
    any_bank.trajectories.finish(t.id, final_answer="done")
    row = any_bank.trajectories.get(t.id)
    assert row.status == "complete" and len(row.steps) == 1


def test_labels_filter_and_held_out_runs(any_bank):
    a = refund(0)
    a.labels = {"split": "train", "run": "r1"}
    b = refund(1)
    b.labels = {"split": "heldout", "run": "r1"}
    c = refund(2)
    for t in (a, b, c):
        any_bank.trajectories.save(t)
    assert any_bank.trajectories.count(labels={"split": "train"}) == 1
    assert any_bank.trajectories.count(splits=HELD_OUT_SPLITS) == 1
    assert any_bank.trajectories.count(exclude_splits=HELD_OUT_SPLITS) == 2
    assert any_bank.trajectories.label_values("run") == {"r1": 2}
    assert {r.id for r in load_batch(any_bank).runs} == {a.id, c.id}
    assert {r.id for r in load_batch(any_bank, include_heldout=True).runs} == {a.id, b.id, c.id}
    assert any_bank.evidence.splits_of([a.id, b.id, c.id]) == {
        a.id: ("train", "r1"), b.id: ("heldout", "r1"), c.id: ("unlabelled", None)}


# -- search --------------------------------------------------------------------------------------------


def test_search_with_filters_and_after_changes(any_bank):
    car = _add(any_bank, "battery-first", "check the battery level before climate control",
               kind="policy", tools=["get_battery"], tags=["car"])
    refund_ = _add(any_bank, "refund-check", "refund an order after the eligibility check",
                   tools=["check_eligibility"], tags=["retail"])
    _add(any_bank, "calendar-free", "find a free calendar slot before booking", tags=["calendar"])
    assert any_bank.search("battery level climate", k=1)[0].skill.id == car.id
    assert [h.skill.id for h in any_bank.search("refund order", k=3, tags=["retail"])] == [refund_.id]
    assert [h.skill.id for h in any_bank.search("battery", k=3, kinds=["policy"])] == [car.id]
    assert [h.skill.id for h in any_bank.search("battery", k=3, tools=["get_battery"])] == [car.id]
    assert car.id not in {h.skill.id for h in any_bank.search("battery level", k=3, exclude=[car.id])}
    assert [s.name for s in any_bank.list_skills(tag="car")] == ["battery-first"]
    assert any_bank.skills.count_by("kind") == {"policy": 1, "procedure": 2}
    any_bank.retire(car.id, reason="obsolete")
    assert car.id not in {h.skill.id for h in any_bank.search("battery level climate", k=3)}
    any_bank.update_skill(refund_.id, description="battery refunds for electric cars", reason="edit")
    assert any_bank.search("battery refunds electric cars", k=1)[0].skill.id == refund_.id
    report = any_bank.verify()
    assert report.ok, report.problems


def test_many_changes_sync_the_index_and_reindex_rebuilds_it(any_bank):
    with any_bank.store.transaction():
        for i in range(300):  # past the dirty limit: the index syncs
            _add(any_bank, f"bulk-{i}", f"bulk skill number {i} about topic {i % 7}")
    any_bank.search("bulk skill number 42 about topic 0", k=1)  # a search notices the changes
    assert any_bank.index.ensure_fresh().seq == any_bank.skills.last_event_seq()
    # What was synced is checked entry by entry, not through a top-1 search: Chroma's HNSW over
    # these near-identical hash vectors misses the nearest one in about 1 bank in 10 (the vector
    # is stored; the graph search does not reach it), which says nothing about the sync.
    expected = {s.id: s.content_hash for s in any_bank.skills.list(status="active")}
    assert any_bank.index.entries() == expected and len(expected) == 300
    assert any_bank.reindex() == {"upserted": 300, "deleted": 0}
    assert any_bank.verify().ok
    assert any_bank.index.entries() == expected


def test_recall_at_5_is_exact_over_near_identical_skills(any_bank):
    """Below skillbank.store._index.EXACT_MAX every backend searches exactly: over 300 near-identical
    hash vectors (where an HNSW graph misses the nearest skill in about 1 bank in 10), the top 5
    are the brute-force top 5, with filters applied before the ranking."""
    import numpy as np

    from skillbank.queries import SearchFilters
    from skillbank.queries import ScoredHit

    with any_bank.store.transaction():
        for i in range(300):
            _add(any_bank, f"bulk-{i}", f"bulk skill number {i} about topic {i % 7}",
                 kind="policy" if i % 3 == 0 else "procedure", tags=[f"topic-{i % 7}"])
    active = any_bank.skills.list(status="active")
    vectors = any_bank.embedder.embed([s.content.embedding_text() for s in active])
    any_bank.sync_index()
    index = any_bank.index
    assert getattr(index, "mode", "exact") == "exact"
    for q in ("bulk skill number 42 about topic 0", "topic 3", "bulk number 299", "skill about 5"):
        v = any_bank.embedder.embed_query(q)
        for filters in (None, SearchFilters(kinds=["policy"], tags=["topic-2"]),
                        SearchFilters(exclude=[s.id for s in active[:50]])):
            allowed = [i for i, s in enumerate(active)
                       if filters is None or filters.allow([ScoredHit(s, 0.0, None)])]
            sims = vectors[allowed] @ v
            truth = np.sort(sims)[::-1][:5]
            hits = index.query(v, 5, filters)
            # By similarity, so ties at the fifth place (hash vectors have many) count as found.
            assert np.allclose([h.similarity for h in hits], truth, atol=1e-5), (q, filters)
            by_id = {s.id: i for i, s in enumerate(active)}
            assert all(by_id[h.skill_id] in allowed for h in hits)


def test_a_filter_means_one_thing_in_python_the_exact_index_and_sql(any_bank):
    """SearchFilters.clauses is the one meaning of a filter (any of the values within an option,
    every option, minus ``exclude``): the check over skills in Python, the exact index's row masks
    and, with pgvector, the search statement keep the very same skills."""
    from skillbank.queries import SearchFilters
    from skillbank.store._index import ExactIndex
    from skillbank.store._vectors import database_index

    kinds = ["policy", "procedure", "guard", "pitfall"]
    with any_bank.store.transaction():
        for i in range(24):
            _add(any_bank, f"mixed-{i}", f"mixed skill {i}", kind=kinds[i % 4],
                 tags=[f"Topic-{i % 3}", *(["shared"] if i % 5 == 0 else [])],
                 tools=[f"tool_{i % 4}", *(["common_tool"] if i % 2 else [])])
    active = any_bank.skills.list(status="active")
    vectors = any_bank._indexing.vectors(active)
    seq = any_bank.skills.last_event_seq()
    indexes: list = [ExactIndex(any_bank.embedder, any_bank.store)]
    if any_bank.store.backend == "postgresql":
        pgvector = database_index(any_bank.store, any_bank.embedder)
        indexes += [pgvector] if pgvector is not None else []
    for index in indexes:
        with index.write_lock():
            index.apply([(s.id, vectors[s.content_hash], s.content_hash) for s in active], [], seq)
    by_name = {s.name: s.id for s in active}
    cases = [
        SearchFilters(),
        SearchFilters(kinds=["policy", "guard"]),
        SearchFilters(tags=["TOPIC-1", "shared"]),  # tags match in any case
        SearchFilters(tools=["common_tool"]),
        SearchFilters(kinds=["procedure"], tags=["topic-0"], tools=["tool_1", "common_tool"]),
        SearchFilters(tags=["no-such-tag"]),
        SearchFilters(kinds=["pitfall"], exclude=[by_name["mixed-3"], by_name["mixed-7"]]),
    ]
    vector = any_bank.embedder.embed_query("mixed skill")
    for filters in cases:
        expected = {s.id for s in active if filters.admits(s)}
        for index in indexes:
            found = {h.skill_id for h in index.query(vector, len(active), filters)}
            assert found == expected, (type(index).__name__, filters)
    assert {s.id for s in active if cases[4].admits(s)} == {by_name["mixed-9"], by_name["mixed-21"]}


# -- locks and concurrency --------------------------------------------------------------------------------


def test_the_evolution_lock_is_exclusive_across_handles(any_bank, backend_target):
    with SkillBank.open(backend_target, embedder="hash") as other:
        with evolution_lock(any_bank, timeout=0):
            with pytest.raises(LockedError, match=r"another evolution round is running .*pid \d+"):
                with evolution_lock(other, timeout=0.2):
                    pass
        with evolution_lock(other, timeout=0):
            pass


def _writer(target, worker, n):
    bank = SkillBank.open(target, embedder="hash")
    skill = bank.get_skill("shared-skill")
    for i in range(n):
        t = refund(worker * 1000 + i, success=i % 2 == 0, skill=skill)
        t.labels = {"worker": str(worker)}
        bank.trajectories.save(t)
        if i % 10 == 0:
            bank.update_skill(skill.id, body=f"edit {worker}-{i}", reason="concurrent edit")
    bank.close()


def test_concurrent_writers_lose_nothing(any_bank, backend_target):
    _add(any_bank, "shared-skill", "a skill every writer injects and edits")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(backend_target), w, 20)) for w in range(4)]
    for p in procs:
        p.start()
    threads = [threading.Thread(target=any_bank.search, args=("refund order",)) for _ in range(4)]
    for t in threads:
        t.start()
    for p in procs:
        p.join(240)
    for t in threads:
        t.join()
    assert [p.exitcode for p in procs] == [0] * 4
    assert any_bank.trajectories.count() == 80
    skill = any_bank.get_skill("shared-skill")
    assert skill.stats.uses == 80 and skill.stats.successes == 40 and skill.stats.failures == 40
    assert skill.version == 1 + 4 * 2  # two edits per writer, none lost
    report = any_bank.verify()
    assert report.ok, report.problems


# -- the round -------------------------------------------------------------------------------------------


def test_an_evolution_round_runs_and_consumes_its_evidence(any_bank):
    for i in range(4):
        any_bank.trajectories.save(refund(i))
    any_bank.trajectories.save(window(0))
    any_bank.trajectories.save(window(1))
    report = evolve(any_bank, promote_policy="all")
    assert report.trajectories == 6 and report.changes
    assert any_bank.rounds.current() == 1
    assert any_bank.trajectories.count(labelled=True, unconsumed=True) == 0
    assert evolve(any_bank).trajectories == 0
    assert any_bank.verify().ok
    assert any_bank.search("refund a damaged order", k=1)


def test_outcome_source_survives(any_bank):
    t = refund(0)
    t.outcome = Outcome(success=True, source="verifier", note="ok")
    any_bank.trajectories.save(t)
    got = any_bank.trajectories.get(t.id).outcome
    assert (got.success, got.source, got.note) == (True, "verifier", "ok")


def test_importing_and_opening_needs_no_fcntl(tmp_path):
    """Windows has no fcntl: skillbank's locks come from filelock, which picks what the OS has."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['fcntl'] = None\n"
            "from skillbank import SkillBank\n"
            "from skillbank.evolution import evolution_lock\n"
            f"bank = SkillBank.open({str(tmp_path / 'bank')!r}, embedder='hash')\n"
            "bank.add_skill(name='portable', description='d', body='b')\n"
            "with evolution_lock(bank, timeout=1):\n"
            "    print(len(bank.list_skills()))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "1"
