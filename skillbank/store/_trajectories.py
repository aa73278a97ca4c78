"""Trajectories: written incrementally so a run that dies mid-way keeps what it did."""

from __future__ import annotations

import builtins
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Collection, Iterable

from skillbank.errors import TrajectoryNotFoundError
from skillbank.models import Injection, LimitEvent, Outcome, Step, Trajectory, utcnow
from skillbank.queries import SolvedRequest
from skillbank.store._base import Dialect, Store
from skillbank.store._skills import SkillRepo

# One huge tool output (a 10 MB page dump) must not bloat the log or every later prompt built
# from it; keep the head and say how much was cut.
MAX_FIELD_CHARS = 32_000


def clip(text: str | None, limit: int = MAX_FIELD_CHARS) -> str | None:
    if text is None:
        return None
    # Lone surrogates (from bytes decoded with surrogateescape) cannot be stored as UTF-8.
    text = text.encode("utf-8", "replace").decode("utf-8")
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n…[truncated {len(text) - limit} characters]"


def _utf8(value: Any) -> Any:
    """``value`` with lone surrogates replaced, recursively: SQLite and JSON need valid UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {_utf8(k): _utf8(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_utf8(v) for v in value)
    return value


def _json(model: Any) -> str:
    try:
        return model.model_dump_json()
    except ValueError:  # PydanticSerializationError: a lone surrogate somewhere in the record
        return type(model).model_validate(_utf8(model.model_dump())).model_dump_json()


def _clip_step(step: Step) -> Step:
    return step.model_copy(update={
        "content": clip(step.content),
        "result": clip(step.result),
        "error": clip(step.error),
    })


@dataclass(frozen=True)
class RunsPage:
    """One page of :meth:`TrajectoryRepo.browse`: the runs shown and how many match in all."""

    runs: list[Trajectory]
    total: int


@dataclass(frozen=True)
class LabelledRun:
    """A consistency measurement stored as trajectories labelled with its ``run`` id and ``arm``
    (``skillbank eval``, the demo): how many, in how many arms, first and last start time."""

    run: str
    trials: int
    arms: int
    first: str
    last: str


class TrajectoryRepo:
    def __init__(self, store: Store, skills: SkillRepo):
        self.store = store
        self.skills = skills

    # -- writes --------------------------------------------------------------------------------

    def start(self, traj: Trajectory) -> None:
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT INTO trajectories (id, task, task_id, task_type, labels, model,"
                " bank_snapshot, status, started_at, today) VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)",
                _utf8((traj.id, clip(traj.task), traj.task_id, traj.task_type, json.dumps(_utf8(traj.labels)),
                       traj.model, traj.bank_snapshot, traj.started_at.isoformat(),
                       traj.today.isoformat() if traj.today else None)),
            )

    def append(
        self,
        trajectory_id: str,
        steps: Iterable[Step] = (),
        limit_events: Iterable[LimitEvent] = (),
        injections: Iterable[Injection] = (),
        *,
        model: str | None = None,
    ) -> None:
        """Add steps, limit events and injections; ``model`` names the model if the row has none.

        A live run's row is written when it starts, before its model has said who it is: the
        name rides along with the first write after that, in the same transaction.
        """
        steps, limit_events, injections = list(steps), list(limit_events), list(injections)
        if not (steps or limit_events or injections):
            return
        with self.store.transaction() as conn:
            if model:
                conn.execute("UPDATE trajectories SET model = coalesce(model, ?) WHERE id = ?",
                             _utf8((model, trajectory_id)))
            conn.executemany(
                "INSERT INTO steps (trajectory_id, idx, kind, data) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (trajectory_id, idx) DO UPDATE SET kind = excluded.kind, data = excluded.data",
                [(trajectory_id, s.index, _utf8(s.kind), _json(_clip_step(s))) for s in steps],
            )
            conn.executemany(
                "INSERT INTO limit_events (trajectory_id, type, category, step, detail, tool, data)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(trajectory_id, e.type.value, e.category, e.step, clip(e.detail, 4000), _utf8(e.tool),
                  json.dumps(_utf8(e.data), default=str)) for e in limit_events],
            )
            conn.executemany(
                "INSERT INTO injections (trajectory_id, step, skill_id, version, rank, score)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [(trajectory_id, i.step, _utf8(i.skill_id), i.version, i.rank, i.score) for i in injections],
            )

    def finish(
        self,
        trajectory_id: str,
        *,
        status: str = "complete",
        final_answer: str | None = None,
        error: str | None = None,
        ended_at: datetime | None = None,
    ) -> None:
        ended_at = ended_at or utcnow()
        tokens = self.store.sql.json_int
        with self.store.transaction() as conn:
            self.store.serialize_changes(conn, shared=True)  # it bumps skills' usage counters
            conn.execute(
                "UPDATE trajectories SET status = :status, final_answer = :final, error = :error,"
                " ended_at = :ended,"
                " n_steps = (SELECT count(*) FROM steps WHERE trajectory_id = :id),"
                f" input_tokens = (SELECT coalesce(sum({tokens('data', 'input_tokens')}), 0)"
                "   FROM steps WHERE trajectory_id = :id),"
                f" output_tokens = (SELECT coalesce(sum({tokens('data', 'output_tokens')}), 0)"
                "   FROM steps WHERE trajectory_id = :id)"
                " WHERE id = :id",
                {"status": status, "final": clip(final_answer), "error": clip(error),
                 "ended": ended_at.isoformat(), "id": trajectory_id},
            )
            self.skills.bump_usage(conn, self._injected(conn, trajectory_id), ended_at, uses=1)

    def discard(self, trajectory_id: str) -> None:
        """Delete an unfinished run and what it wrote (a recorder that learned the run is not its own)."""
        with self.store.transaction() as conn:
            # A finished run has counted in its skills' statistics: it stays.
            if conn.execute("SELECT 1 FROM trajectories WHERE id = ? AND status = 'running'",
                            (trajectory_id,)).fetchone() is None:
                return
            for table in ("steps", "limit_events", "injections"):
                conn.execute(f"DELETE FROM {table} WHERE trajectory_id = ?", (trajectory_id,))
            conn.execute("DELETE FROM trajectories WHERE id = ?", (trajectory_id,))

    def save(self, traj: Trajectory) -> str:
        """Store a whole trajectory at once (runners and imports); returns its id."""
        with self.store.transaction():
            self.start(traj)
            self.append(traj.id, traj.steps, traj.limit_events, traj.injections)
            if traj.status != "running":
                self.finish(traj.id, status=traj.status, final_answer=traj.final_answer,
                            error=traj.error, ended_at=traj.ended_at)
            if traj.outcome is not None:
                self.record_outcome(traj.id, traj.outcome)
        return traj.id

    def record_outcome(self, trajectory_id: str, outcome: Outcome) -> None:
        """Label a run; a relabel replaces the old label in the skills' statistics."""
        with self.store.transaction() as conn:
            self.store.serialize_changes(conn, shared=True)  # it bumps skills' usage counters
            row = conn.execute(
                "SELECT success FROM trajectories WHERE id = ?" + self.store.sql.for_update,
                (trajectory_id,),
            ).fetchone()
            if row is None:
                raise TrajectoryNotFoundError(
                    f"no trajectory {trajectory_id!r}; list them with `skillbank runs list`"
                )
            before = row[0]
            after = None if outcome.success is None else int(outcome.success)
            conn.execute(
                "UPDATE trajectories SET success = ?, score = ?, outcome = ? WHERE id = ?",
                (after, outcome.score, _json(outcome), trajectory_id),
            )
            injected = self._injected(conn, trajectory_id)
            delta = {"successes": 0, "failures": 0}
            for value, sign in ((before, -1), (after, +1)):
                if value is not None:
                    delta["successes" if value else "failures"] += sign
            if any(delta.values()):
                self.skills.bump_usage(conn, injected, outcome.recorded_at, **delta)

    def set_labels(self, trajectory_id: str, *, task_id: str | None = None,
                   task_type: str | None = None, labels: dict[str, str] | None = None) -> None:
        """Tag a run after the fact (runners know the task and arm; the adapter may not)."""
        with self.store.transaction() as conn:
            row = conn.execute("SELECT labels FROM trajectories WHERE id = ?" + self.store.sql.for_update,
                               (trajectory_id,)).fetchone()
            if row is None:
                raise TrajectoryNotFoundError(f"no trajectory {trajectory_id!r}")
            merged = {**json.loads(row[0]), **(labels or {})}
            conn.execute(
                "UPDATE trajectories SET task_id = coalesce(?, task_id),"
                " task_type = coalesce(?, task_type), labels = ? WHERE id = ?",
                _utf8((task_id, task_type, json.dumps(_utf8(merged)), trajectory_id)),
            )

    def mark_consumed(self, ids: Iterable[str], round_no: int) -> None:
        with self.store.transaction() as conn:
            self.store.serialize_changes(conn)  # a round's writes, in the order every round takes
            conn.executemany(
                "UPDATE trajectories SET consumed_round = ? WHERE id = ?",
                [(round_no, i) for i in ids],
            )

    @staticmethod
    def _injected(conn: Any, trajectory_id: str) -> list[str]:
        return [r[0] for r in conn.execute(
            "SELECT DISTINCT skill_id FROM injections WHERE trajectory_id = ?", (trajectory_id,)
        )]

    # -- reads ---------------------------------------------------------------------------------

    def get(self, trajectory_id: str) -> Trajectory:
        row = self.store.query_one("SELECT * FROM trajectories WHERE id = ?", (trajectory_id,))
        if row is None:
            raise TrajectoryNotFoundError(
                f"no trajectory {trajectory_id!r}; list them with `skillbank runs list`"
            )
        return self._load([row])[0]

    def list(self, *, limit: int | None = 50, with_steps: bool = False, **filters: Any) -> list[Trajectory]:
        """Newest first; ``filters`` as in :func:`where_clause` (status, labelled, unconsumed,
        since, labels, splits, exclude_splits)."""
        where, params = self._where(**filters)
        sql = f"SELECT * FROM trajectories WHERE {where} ORDER BY started_at DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = self.store.query(sql, params)
        return self._load(rows) if with_steps else [self._summary(r) for r in rows]

    def count(self, **filters: Any) -> int:
        where, params = self._where(**filters)
        row = self.store.query_one(f"SELECT count(*) AS n FROM trajectories WHERE {where}", params)
        return row["n"] if row else 0

    def browse(self, *, outcome: str | None = None, limit_type: str | None = None,
               skill_ids: Collection[str] | None = None, ids: Collection[str] | None = None,
               offset: int = 0, limit: int = 50) -> RunsPage:
        """One page of runs over every stored run, newest first, with their steps, and how many
        match in all; each filter is applied in SQL (an unset one matches every run).

        ``outcome``: ``success``, ``failure`` or ``unlabelled``; ``limit_type``: a run that hit a
        limit of that type; ``skill_ids``: a run any of them was injected into; ``ids``: only
        these runs. An empty ``skill_ids`` or ``ids`` matches no run. A bad ``outcome`` raises
        ValueError naming the accepted values.
        """
        clauses, params = browse_clause(outcome=outcome, limit_type=limit_type, skill_ids=skill_ids, ids=ids)
        where = " AND ".join(clauses)
        row = self.store.query_one(f"SELECT count(*) AS n FROM trajectories t WHERE {where}", params)
        total = int(row["n"]) if row else 0
        rows = self.store.query(
            f"SELECT * FROM trajectories t WHERE {where} ORDER BY t.started_at DESC, t.id DESC"
            f" LIMIT {int(limit)} OFFSET {int(offset)}", params)
        return RunsPage(self._load(rows), total)

    def _where(self, **filters: Any) -> tuple[str, builtins.list[Any]]:
        return where_clause(self.store.sql, **filters)

    def solved_requests(self, limit: int) -> builtins.list[SolvedRequest]:
        """The requests of the newest ``limit`` finished runs that succeeded, each with whether
        the run called a tool (a step of kind ``tool``: a call that ran; one a reminder answered
        instead did not)."""
        rows = self.store.query(
            "SELECT t.task AS task, CASE WHEN EXISTS (SELECT 1 FROM steps s WHERE s.trajectory_id = t.id"
            " AND s.kind = 'tool') THEN 1 ELSE 0 END AS called FROM trajectories t"
            f" WHERE t.success = 1 AND t.status = 'complete' ORDER BY t.started_at DESC LIMIT {int(limit)}")
        return [SolvedRequest(r["task"], bool(r["called"])) for r in rows]

    def totals(self) -> dict[str, int]:
        """Runs in all, labelled, successful and incomplete."""
        row = self.store.query_one(
            "SELECT count(*) AS total,"
            " sum(CASE WHEN success IS NOT NULL THEN 1 ELSE 0 END) AS labelled,"
            " sum(CASE WHEN success = 1 THEN 1 ELSE 0 END) AS successes,"
            " sum(CASE WHEN status = 'incomplete' THEN 1 ELSE 0 END) AS incomplete FROM trajectories")
        return {k: int(v or 0) for k, v in (row or {}).items()}

    def limit_counts(self) -> dict[str, int]:
        """Limit events per type, over every run."""
        rows = self.store.query("SELECT type, count(*) AS n FROM limit_events GROUP BY type")
        return {r["type"]: r["n"] for r in rows}

    def labelled_runs(self) -> builtins.list[LabelledRun]:
        """The measurements stored in the bank (trajectories labelled ``run`` and ``arm``), newest
        first."""
        run = self.store.sql.json_text("labels", "run")
        arm = self.store.sql.json_text("labels", "arm")
        rows = self.store.query(
            f"SELECT {run} AS run, count(*) AS n, min(started_at) AS first, max(started_at) AS last,"
            f" count(DISTINCT {arm}) AS arms FROM trajectories WHERE {run} IS NOT NULL AND {arm} IS NOT NULL"
            f" GROUP BY {run} ORDER BY max(started_at) DESC")
        return [LabelledRun(str(r["run"]), r["n"], r["arms"], str(r["first"]), str(r["last"])) for r in rows]

    def label_values(self, key: str) -> dict[str, int]:
        """Each value of the label ``key`` with how many runs carry it."""
        field = self.store.sql.json_field_param("labels")
        rows = self.store.query(f"SELECT {field} AS value, count(*) AS n FROM trajectories"
                                f" WHERE {field} IS NOT NULL GROUP BY 1",
                                (self.store.sql.json_key(key), self.store.sql.json_key(key)))
        return {str(r["value"]): r["n"] for r in rows}

    @staticmethod
    def _summary(row: dict[str, Any]) -> Trajectory:
        outcome = Outcome.model_validate_json(row["outcome"]) if row["outcome"] else None
        return Trajectory(
            id=row["id"], task=row["task"], task_id=row["task_id"], task_type=row["task_type"],
            labels=json.loads(row["labels"]), model=row["model"],
            bank_snapshot=row["bank_snapshot"], status=row["status"], error=row["error"],
            final_answer=row["final_answer"], started_at=row["started_at"],
            ended_at=row["ended_at"], today=row.get("today"), outcome=outcome,
        )

    def _load(self, rows: builtins.list[dict[str, Any]]) -> builtins.list[Trajectory]:
        """Summaries plus their steps, limit events and injections, in three queries per chunk."""
        trajs = {r["id"]: self._summary(r) for r in rows}
        ids = list(trajs)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for r in self.store.query(
                f"SELECT trajectory_id, data FROM steps WHERE trajectory_id IN ({marks}) ORDER BY idx", chunk
            ):
                trajs[r["trajectory_id"]].steps.append(Step.model_validate_json(r["data"]))
            for r in self.store.query(
                f"SELECT * FROM limit_events WHERE trajectory_id IN ({marks}) ORDER BY rowid", chunk
            ):
                trajs[r["trajectory_id"]].limit_events.append(LimitEvent(
                    type=r["type"], step=r["step"], detail=r["detail"], tool=r["tool"],
                    data=json.loads(r["data"]),
                ))
            for r in self.store.query(
                f"SELECT * FROM injections WHERE trajectory_id IN ({marks}) ORDER BY step, rank", chunk
            ):
                trajs[r["trajectory_id"]].injections.append(Injection(
                    step=r["step"], skill_id=r["skill_id"], version=r["version"],
                    rank=r["rank"], score=r["score"],
                ))
        return [trajs[i] for i in ids]


def where_clause(
    sql: Dialect,
    *,
    status: str | None = None,
    labelled: bool | None = None,
    unconsumed: bool = False,
    since: datetime | None = None,
    labels: dict[str, str] | None = None,
    splits: Collection[str] | None = None,
    exclude_splits: Collection[str] | None = None,
) -> tuple[str, list[Any]]:
    """A WHERE clause over ``trajectories`` and its parameters.

    ``splits`` keeps only runs whose ``split`` label is one of them; ``exclude_splits`` leaves
    out runs whose ``split`` label is one of them (a run without one is kept). Which splits mean
    what is the evaluation's vocabulary (:mod:`skillbank.consistency._splits`), not the store's.
    """
    clauses, params = ["1=1"], []
    if status:
        clauses.append("status = ?")
        params.append(status)
    if labelled is not None:
        clauses.append("success IS NOT NULL" if labelled else "success IS NULL")
    if unconsumed:
        clauses.append("consumed_round IS NULL")
    if since is not None:
        clauses.append("started_at >= ?")
        params.append(since.isoformat())
    for key, value in (labels or {}).items():
        clauses.append(f"{sql.json_field_param('labels')} = ?")
        params += [sql.json_key(key), value]
    for names, negate in ((splits, False), (exclude_splits, True)):
        if names:
            marks = ",".join("?" * len(names))
            clauses.append(f"coalesce({sql.json_text('labels', 'split')}, '')"
                           f" {'NOT ' if negate else ''}IN ({marks})")
            params += sorted(names)
    return " AND ".join(clauses), params


RUN_OUTCOMES = ("success", "failure", "unlabelled")


def browse_clause(*, outcome: str | None, limit_type: str | None, skill_ids: Collection[str] | None,
                  ids: Collection[str] | None) -> tuple[list[str], list[Any]]:
    """The WHERE conditions (over ``trajectories t``) of :meth:`TrajectoryRepo.browse`."""
    clauses: list[str] = ["1=1"]
    params: list[Any] = []
    if outcome:
        if outcome not in RUN_OUTCOMES:
            raise ValueError(f"outcome {outcome!r}: use one of {', '.join(RUN_OUTCOMES)}")
        clauses.append({"success": "t.success = 1", "failure": "t.success = 0",
                        "unlabelled": "t.success IS NULL"}[outcome])
    if limit_type:
        clauses.append("t.id IN (SELECT e.trajectory_id FROM limit_events e WHERE e.type = ?)")
        params.append(limit_type)
    # IN (subquery), not a correlated EXISTS: SQLite would walk a skill's injections once per
    # run (seconds at 10,000 runs); this reads them once through injections_skill.
    by_skill = "t.id IN (SELECT i.trajectory_id FROM injections i WHERE i.skill_id IN ({marks}))"
    for values, test in ((skill_ids, by_skill), (ids, "t.id IN ({marks})")):
        if values is None:
            continue
        values = sorted(set(values))
        if not values:
            clauses.append("1=0")
            continue
        clauses.append(test.format(marks=",".join("?" * len(values))))
        params += values
    return clauses, params
