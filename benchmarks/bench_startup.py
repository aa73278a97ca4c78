"""Startup cost in a fresh subprocess: import, open, first search; sentence-transformers for scale.

    python benchmarks/bench_startup.py            # median of 5 fresh subprocesses each
    python benchmarks/bench_startup.py --runs 9
    python benchmarks/bench_startup.py --quick    # smoke run (hash embedder for the first search)

Every figure is measured inside a new ``python`` process (so nothing is already imported or
cached in memory; the OS file cache is warm after the first run, as on a developer machine).
The bank opened is an existing one with 1,000 skills and a built index.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

PROBE = r"""
import json, os, sys, time
t0 = time.perf_counter()
import skillbank
t1 = time.perf_counter()
bank = skillbank.SkillBank.open(sys.argv[1], embedder=sys.argv[2])
t2 = time.perf_counter()
out = {"import": t1 - t0, "open": t2 - t1}
if sys.argv[3] == "search":
    hits = bank.search("close stale jira tickets when the API paginates", k=5)
    t3 = time.perf_counter()
    out["first_search"] = t3 - t2
    hits = bank.search("summarise failed airflow DAG runs", k=5)
    out["second_search"] = time.perf_counter() - t3
    out["hits"] = len(hits)
print("RESULT" + json.dumps(out))
"""

ST_PROBE = r"""
import json, time
t0 = time.perf_counter()
import sentence_transformers
t1 = time.perf_counter()
import chromadb
t2 = time.perf_counter()
print("RESULT" + json.dumps({"st": t1 - t0, "chroma": t2 - t1}))
"""


def run_probe(code: str, *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"}, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    line = next(l for l in proc.stdout.splitlines() if l.startswith("RESULT"))
    return json.loads(line[len("RESULT"):])


def build_bank(path: Path, embedder: str, n: int) -> None:
    from skillbank import SkillBank
    from skillbank.embed import resolve_embedder

    if (path / "bank.db").exists():
        return
    skills = common.synthetic_skills(n)
    base = resolve_embedder(embedder)
    texts = [common.embedding_text(s) for s in skills]
    vectors = common.cached_vectors(texts, base, "skills")
    from bench_retrieval import make_lookup_embedder

    bank = SkillBank.open(path, embedder=make_lookup_embedder(base, dict(zip(texts, vectors))))
    with bank.store.transaction():
        for s in skills:
            bank.add_skill(s["name"], s["description"], s["body"], tools=s["tools"], tags=s["tags"])
    bank.sync_index()
    bank.close()


def main(argv: list[str] | None = None) -> int:
    parser = common.base_parser(__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    runs = 2 if args.quick else args.runs
    embedder = "hash:384" if args.quick else "minilm"
    n = 100 if args.quick else 1000
    path = common.OUT_DIR / "startup" / f"bank-{embedder.replace(':', '_')}-{n}"
    build_bank(path, embedder, n)

    run_probe(PROBE, str(path), embedder, "open")  # warm the OS file cache once
    opens = [run_probe(PROBE, str(path), embedder, "open") for _ in range(runs)]
    searches = [run_probe(PROBE, str(path), embedder, "search") for _ in range(runs)]
    sts = [] if args.quick else [run_probe(ST_PROBE) for _ in range(runs)]

    def med(items: list[dict], key: str) -> float:
        return statistics.median(x[key] for x in items) * 1000

    imp, opn = med(opens, "import"), med(opens, "open")
    rows = [
        ["import skillbank", f"{imp:.0f}"],
        ["SkillBank.open(existing bank)", f"{opn:.0f}"],
        ["import + open (target < 500 ms)", f"{imp + opn:.0f}", "PASS" if imp + opn < 500 else "MISS"],
        [f"first search after open (model + Chroma load, {embedder})", f"{med(searches, 'first_search'):.0f}"],
        ["second search (warm)", f"{med(searches, 'second_search'):.1f}"],
        ["import + open + first search", f"{med(searches, 'import') + med(searches, 'open') + med(searches, 'first_search'):.0f}"],
    ]
    if sts:
        rows += [["import sentence_transformers (for comparison)", f"{med(sts, 'st'):.0f}"],
                 ["import chromadb (after sentence_transformers)", f"{med(sts, 'chroma'):.0f}"]]
    rows = [r + [""] * (3 - len(r)) for r in rows]
    headers = ["step", f"median ms (of {runs} fresh processes)", "target"]
    common.print_table("Startup", headers, rows)
    if not args.no_write and not args.quick:
        cmd = "python benchmarks/bench_startup.py " + " ".join(argv if argv is not None else sys.argv[1:])
        common.update_results("Startup", "\n\n".join([
            f"Command: `{cmd.strip()}`", common.machine_markdown(),
            f"Each figure: median over {runs} fresh `python` subprocesses (warm OS file cache); "
            f"existing bank with {n} skills and a built index; bundled MiniLM.",
            common.markdown_table(headers, rows),
        ]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
