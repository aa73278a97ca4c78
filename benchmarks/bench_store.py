"""The store on PostgreSQL beside SQLite, in one run: writes, and search at 1k / 10k / 100k skills.

    python benchmarks/bench_store.py                          # 1,000 10,000 100,000 skills
    python benchmarks/bench_store.py --sizes 1000 10000       # without the 100k point
    python benchmarks/bench_store.py --quick                  # smoke run (hash embedder, tiny)

Servers: two real PostgreSQL servers started in temporary folders on 127.0.0.1 (see
tests/postgres_support.py), with fsync on: pgserver's PostgreSQL 16 with pgvector, and a server
without pgvector (Debian's postgresql-15) for the exact fallback. SQLite runs in WAL mode with
synchronous=NORMAL (the embedded default's settings: no fsync per commit).

Writes: trajectories/s with 1 and 8 writer processes (PostgreSQL also with
``synchronous_commit=off`` in the connection string: SQLite's durability, where a crash of the
machine, not of a process, may lose the last commits), each trajectory written as the adapter
does (``start``, 5 ``append`` calls of a model step + a tool step + 2 injections, ``finish``;
bench_logging.py's data), then every run counted and the bank verified.

Search: the same skills and vectors in three banks: the embedded default (SQLite + Chroma HNSW),
PostgreSQL + pgvector HNSW, and PostgreSQL without pgvector (the exact fallback: the PostgreSQL
bank copied with ``copy_store``, searched in process over the cached embeddings). Timed:
``bank.search_vector(v, k=5)``, a whole search of an already embedded query (filters, skill
rows, ranking), 200 queries after 5 warm-ups. recall@5 is the raw index's top 5 against exact
numpy cosine over the same vectors (``search_vector`` then removes near-duplicates, so its own
top 5 is not an index measure). Vectors: all-MiniLM-L6-v2 for up to ``--real-up-to`` skills;
beyond that, noisy copies of those (labelled in the table), as in bench_retrieval.py.
"""

from __future__ import annotations

import multiprocessing as mp
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import common  # noqa: E402
from bench_logging import STEPS, parallel_write, write_incremental  # noqa: E402
from bench_retrieval import exact_topk, make_lookup_embedder, recall, run_queries  # noqa: E402

K = 5


def _log(*parts: Any) -> None:
    print(*parts, flush=True)


# -- writes ----------------------------------------------------------------------------------------


def _new_bank(target: Any) -> tuple[Any, list[str]]:
    from skillbank import SkillBank

    bank = SkillBank.open(target, embedder="hash")
    with bank.store.transaction():
        ids = [bank.add_skill(f"skill-{i}", f"When to use skill {i}.", f"Do thing {i}.").id for i in range(50)]
    return bank, ids


def bench_writes(targets: dict[str, Any], n: int) -> list[list[Any]]:
    rows = []
    ctx = mp.get_context("spawn")
    for backend, make_target in targets.items():
        for writers in (1, 8):
            bank, ids = _new_bank(make_target(f"writes-{writers}"))
            per = max(1, n // writers)
            if writers == 1:
                t0 = time.perf_counter()
                write_incremental(bank, random.Random(1), ids, per, "single")
                dt = time.perf_counter() - t0
            else:
                dt, _ = parallel_write(ctx, str(bank.path) if bank.path is not None else bank.store.url,
                                       writers, per, ids)
            expected = per * writers
            found = bank.trajectories.count(status="complete")
            steps = sum(len(t.steps) for t in bank.trajectories.list(limit=None, with_steps=True))
            report = bank.verify(check_index=False)
            rows.append([backend, writers, expected, f"{dt:.1f}", f"{expected / dt:.0f}",
                         f"{found}/{expected}", f"{steps}/{expected * STEPS}", "ok" if report.ok else "FAILED"])
            _log(f"  writes: {backend}, {writers} writer(s): {expected / dt:.0f} traj/s")
            bank.close()
    return rows


# -- search ----------------------------------------------------------------------------------------


def _fill(bank: Any, skills: list[dict[str, Any]]) -> float:
    t0 = time.perf_counter()
    with bank.store.transaction():  # one transaction: add_skill calls join it
        for s in skills:
            bank.add_skill(s["name"], s["description"], s["body"], tools=s["tools"], tags=s["tags"])
    return time.perf_counter() - t0


def bench_search(n: int, args: Any, base: Any, targets: dict[str, Any], plain_db: Any,
                 qvecs: np.ndarray) -> tuple[list[list[Any]], str]:
    from skillbank import SkillBank
    from skillbank.store._transfer import copy_store

    skills = common.synthetic_skills(n)
    texts = [common.embedding_text(s) for s in skills]
    real_n = min(n, args.real_up_to)
    real = common.cached_vectors(texts[:real_n], base, "skills", log=_log)
    label = base.name
    if n > real_n:
        rng = np.random.default_rng(3)
        extra = real[np.arange(real_n, n) % real_n] + rng.normal(0, 0.02, (n - real_n, real.shape[1])).astype(np.float32)
        extra /= np.linalg.norm(extra, axis=1, keepdims=True)
        vectors = np.vstack([real, extra]).astype(np.float32)
        label = f"{real_n} {base.name} + {n - real_n} noisy copies"
    else:
        vectors = np.asarray(real, dtype=np.float32)
    embedder = make_lookup_embedder(base, dict(zip(texts, vectors)))
    truth = exact_topk(vectors, qvecs, K)
    row_of = {s["name"]: i for i, s in enumerate(skills)}

    systems: list[tuple[str, Any, str]] = []
    sqlite_bank = SkillBank.open(targets["sqlite"](f"search-{n}"), embedder=embedder)
    t_sql = _fill(sqlite_bank, skills)
    t0 = time.perf_counter()
    sqlite_bank.sync_index()
    systems.append(("SQLite + Chroma HNSW (embedded default)", sqlite_bank,
                    f"{t_sql:.0f}s rows + {time.perf_counter() - t0:.0f}s index"))
    pg_bank = SkillBank.open(targets["postgresql"](f"search-{n}"), embedder=embedder)
    t_sql = _fill(pg_bank, skills)
    t0 = time.perf_counter()
    pg_bank.sync_index()
    systems.append(("PostgreSQL + pgvector HNSW", pg_bank, f"{t_sql:.0f}s rows + {time.perf_counter() - t0:.0f}s index"))
    exact_url = plain_db()
    exact_bank = SkillBank.open(exact_url, embedder=embedder)
    t0 = time.perf_counter()
    copy_store(pg_bank.store, exact_bank.store)
    t_copy = time.perf_counter() - t0
    t0 = time.perf_counter()
    exact_bank.sync_index()
    systems.append(("PostgreSQL, no pgvector (exact fallback)", exact_bank,
                    f"{t_copy:.0f}s copy + {time.perf_counter() - t0:.0f}s load"))

    rows = []
    for name, bank, build in systems:
        ids = {s.id: row_of[s.name] for s in bank.list_skills()}
        for v in qvecs[:5]:
            bank.search_vector(v, K)
        times, _ = run_queries(lambda v: bank.search_vector(v, K), list(qvecs), None)
        bank.index.ensure_fresh()
        raw = [[ids[h.skill_id] for h in bank.index.query(v, K)] for v in qvecs]
        summary = common.summarize_ms(times)
        rows.append([n, name, len(times), common.fmt(summary["p50"]), common.fmt(summary["p95"]),
                     f"{recall(raw, truth):.3f}", build])
        _log(f"  search: {n} skills, {name}: p50 {summary['p50']:.2f} ms, p95 {summary['p95']:.2f} ms, "
             f"recall@5 {recall(raw, truth):.3f}")
    for _, bank, _ in systems:
        bank.close()
    return rows, label


def main(argv: list[str] | None = None) -> int:
    import signal

    from postgres_support import LocalPostgres

    # A stopped run still stops its servers (the context managers' exit runs on SystemExit).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = common.base_parser(__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[1000, 10_000, 100_000])
    parser.add_argument("--writes", type=int, default=2000, help="trajectories per write configuration")
    parser.add_argument("--real-up-to", type=int, default=10_000,
                        help="real MiniLM vectors up to this many skills; noisy copies beyond")
    args = parser.parse_args(argv)
    sizes = [300] if args.quick else args.sizes
    n_writes = 16 if args.quick else args.writes
    base = common.get_embedder(args.quick)
    root = common.OUT_DIR / "store"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)

    started = time.perf_counter()
    with LocalPostgres("pgvector", fsync=True) as pg, LocalPostgres("plain", fsync=True) as plain:
        targets = {"sqlite": lambda name: root / name,
                   "postgresql": lambda name: pg.create_database(name.replace("-", "_"))}
        # The same server with SQLite's durability (commits not flushed one by one), set the way
        # a user would: in the connection string.
        relaxed = {**targets, "postgresql, synchronous_commit=off": lambda name: pg.create_database(
            name.replace("-", "_") + "_async") + "?options=-c%20synchronous_commit%3Doff"}
        _log(f"servers: {pg.bindir.parent.name} (pgvector) on :{pg.port}, {plain.bindir} on :{plain.port}")
        write_rows = bench_writes(relaxed, n_writes)
        queries = common.synthetic_queries(200)
        qvecs = np.asarray(base.embed(queries), dtype=np.float32)
        search_rows, labels = [], {}
        for n in sizes:
            rows, labels[n] = bench_search(n, args, base, targets, plain.create_database, qvecs)
            search_rows += rows
    seconds = time.perf_counter() - started

    write_headers = ["backend", "writers", "trajectories", "seconds", "traj/s", "found", "steps found", "verify"]
    search_headers = ["skills", "system", "queries", "p50 ms", "p95 ms", "recall@5 (index)", "build"]
    common.print_table("Trajectory writes", write_headers, write_rows)
    common.print_table("Search (search_vector, k=5)", search_headers, search_rows)
    if args.quick or args.no_write:
        return 0
    command = " ".join(["python benchmarks/bench_store.py", *(argv if argv is not None else sys.argv[1:])])
    body = "\n\n".join([
        f"Command: `{command}` ({seconds / 60:.0f} min)",
        common.machine_markdown(),
        "Servers: pgserver's PostgreSQL 16.2 with pgvector 0.6.2 and Debian's PostgreSQL 15 "
        "(no pgvector), each in a temporary folder on 127.0.0.1, fsync on, default settings "
        "otherwise; SQLite in WAL mode with synchronous=NORMAL. Writes use bench_logging.py's "
        "trajectories (10 steps, 2 injections per model turn), written as the adapter does.",
        common.markdown_table(write_headers, write_rows),
        "Search: `bank.search_vector(v, k=5)` over 200 pre-embedded queries (after 5 warm-ups); "
        "recall@5 is the index's raw top 5 against exact cosine. Vectors: "
        + "; ".join(f"{n}: {label}" for n, label in labels.items()) + ".",
        common.markdown_table(search_headers, search_rows),
    ])
    common.update_results("Store: PostgreSQL beside SQLite", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
