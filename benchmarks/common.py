"""Shared helpers for the benchmarks: machine info, tables, RESULTS.md sections, synthetic data.

Everything here is deterministic (seeded) so runs on different machines use the same data.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import statistics
import sys
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

BENCH_DIR = Path(__file__).resolve().parent
# gitignored: embedding caches and scratch banks; the smoke test points it at a temp dir.
OUT_DIR = Path(os.environ.get("SKILLBANK_BENCH_OUT") or BENCH_DIR / "out")
RESULTS = BENCH_DIR / "RESULTS.md"

KEY_PACKAGES = ("skillbank", "numpy", "chromadb", "sentence-transformers", "torch", "langgraph",
                "langgraph-checkpoint-sqlite", "sqlite-vec")


# -- machine ---------------------------------------------------------------------------------

def _memory_gb() -> str:
    try:
        with open("/proc/meminfo") as fh:
            kb = int(re.search(r"MemTotal:\s+(\d+)", fh.read()).group(1))
        return f"{kb / 1024 / 1024:.1f} GB"
    except Exception:
        return "?"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            m = re.search(r"model name\s*:\s*(.+)", fh.read())
            return m.group(1).strip() if m else platform.processor() or "?"
    except Exception:
        return platform.processor() or "?"


def version(pkg: str) -> str:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine_info() -> dict[str, str]:
    import sqlite3

    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": f"{os.cpu_count()} cores ({_cpu_model()})",
        "memory": _memory_gb(),
        "os": platform.platform(),
        "load average at start (1/5/15 min)": " / ".join(f"{x:.1f}" for x in os.getloadavg()),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "packages": ", ".join(f"{p} {version(p)}" for p in KEY_PACKAGES),
    }


def machine_markdown() -> str:
    info = machine_info()
    return "\n".join(f"- **{k}**: {v}" for k, v in info.items())


# -- stats and output -------------------------------------------------------------------------

def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100) without numpy."""
    data = sorted(values)
    if not data:
        return float("nan")
    pos = (len(data) - 1) * q / 100
    lo, hi = int(pos), min(int(pos) + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def summarize_ms(samples_s: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000 for s in samples_s]
    return {"p50": percentile(ms, 50), "p95": percentile(ms, 95), "p99": percentile(ms, 99),
            "mean": statistics.fmean(ms) if ms else float("nan")}


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t0, out


def print_table(title: str, headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    rows = [[str(c) for c in r] for r in rows]
    try:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title)
        for h in headers:
            table.add_column(str(h))
        for r in rows:
            table.add_row(*r)
        Console(width=200).print(table)
    except ImportError:  # plain fallback
        print(title)
        print(markdown_table(headers, rows))
    sys.stdout.flush()


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(map(str, headers)) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def update_results(section: str, body: str, path: Path = RESULTS) -> None:
    """Replace (or append) the ``## section`` block of RESULTS.md, leaving others untouched."""
    begin, end = f"<!-- BEGIN {section} -->", f"<!-- END {section} -->"
    block = f"{begin}\n## {section}\n\n{body.strip()}\n{end}\n"
    text = path.read_text() if path.exists() else "# skillbank benchmark results\n\n" \
        "Each section is written by its benchmark script (`python benchmarks/bench_X.py`).\n\n"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end) + r"\n?", re.S)
    text = pattern.sub(lambda _m: block, text) if pattern.search(text) else text.rstrip() + "\n\n" + block
    path.write_text(text)


def base_parser(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes and the hash embedder: a smoke run; numbers meaningless, RESULTS.md untouched")
    parser.add_argument("--no-write", action="store_true", help="do not update RESULTS.md")
    return parser


def fmt(x: float, digits: int = 2) -> str:
    if x != x:  # nan
        return "n/a"
    return f"{x:.{digits}f}"


# -- synthetic skills and queries ---------------------------------------------------------------

_DOMAINS = [
    ("github", "pull request", ["github_create_pr", "github_list_issues", "git_diff"]),
    ("jira", "ticket", ["jira_search", "jira_update_issue", "jira_transition"]),
    ("salesforce", "opportunity", ["sf_query", "sf_update_record", "sf_describe"]),
    ("postgres", "table", ["sql_query", "sql_explain", "list_tables"]),
    ("stripe", "invoice", ["stripe_get_invoice", "stripe_refund", "stripe_list_charges"]),
    ("slack", "channel message", ["slack_post", "slack_search", "slack_history"]),
    ("kubernetes", "deployment", ["kubectl_get", "kubectl_logs", "kubectl_rollout"]),
    ("s3", "bucket object", ["s3_list", "s3_get_object", "s3_put_object"]),
    ("zendesk", "support ticket", ["zd_search", "zd_update", "zd_macro"]),
    ("google calendar", "meeting", ["gcal_list", "gcal_create_event", "gcal_freebusy"]),
    ("shopify", "order", ["shop_get_order", "shop_refund", "shop_inventory"]),
    ("hubspot", "contact", ["hs_search_contacts", "hs_update_contact", "hs_merge"]),
    ("airflow", "DAG run", ["airflow_trigger", "airflow_task_logs", "airflow_clear"]),
    ("bigquery", "dataset", ["bq_query", "bq_schema", "bq_dry_run"]),
    ("confluence", "page", ["cf_search", "cf_get_page", "cf_update_page"]),
    ("pagerduty", "incident", ["pd_list_incidents", "pd_ack", "pd_resolve"]),
    ("linear", "issue", ["linear_search", "linear_create", "linear_update"]),
    ("notion", "database row", ["notion_query", "notion_update", "notion_create"]),
    ("gmail", "email thread", ["gmail_search", "gmail_send", "gmail_label"]),
    ("terraform", "plan", ["tf_plan", "tf_state_show", "tf_validate"]),
    ("docker", "container", ["docker_ps", "docker_logs", "docker_restart"]),
    ("elasticsearch", "index", ["es_search", "es_mapping", "es_reindex"]),
    ("twilio", "SMS", ["twilio_send", "twilio_status", "twilio_lookup"]),
    ("quickbooks", "bill", ["qb_query", "qb_create_bill", "qb_vendor"]),
    ("snowflake", "warehouse query", ["sf_sql", "sf_history", "sf_warehouse"]),
    ("datadog", "monitor", ["dd_query_metrics", "dd_mute", "dd_events"]),
    ("workday", "time-off request", ["wd_get_worker", "wd_timeoff", "wd_org"]),
    ("sharepoint", "document", ["sp_search", "sp_download", "sp_permissions"]),
]
_ACTIONS = [
    ("find", "locate"), ("update", "change"), ("summarize", "summarise"), ("close", "resolve"),
    ("create", "open"), ("merge", "combine"), ("export", "download"), ("validate", "check"),
    ("reassign", "hand over"), ("archive", "clean up"), ("escalate", "raise"), ("compare", "diff"),
    ("retry", "re-run"), ("paginate", "page through"), ("deduplicate", "dedupe"), ("migrate", "move"),
]
_QUALIFIERS = [
    "stale", "duplicate", "overdue", "high-priority", "failed", "recently modified", "unassigned",
    "flagged", "large", "archived", "draft", "blocked", "customer-facing", "internal", "expired",
    "partially completed", "rate-limited", "mislabelled", "orphaned", "cross-region",
]
_CONSTRAINTS = [
    "when the API returns at most 100 results per page", "without exceeding the tool-call budget",
    "when the field name in the request is unknown", "when the required tool is missing",
    "when results must be filtered by date range", "when the user gives only a partial name",
    "after an authentication error", "when the token budget is tight", "when timestamps are in UTC",
    "when the record may be locked by another user", "when the search returns no results",
    "when the response is truncated", "before making any write", "when two records conflict",
    "when the user asks for a CSV", "when the input has typos", "when fields are nested JSON",
    "when the request times out", "for bulk operations over many items", "in a read-only environment",
]
_TEMPLATES = [
    "Use this to {a} {q} {o}s in {d} {c}.",
    "How to {a} a {q} {d} {o} {c}; prefer {t} and verify the result.",
    "Applies when the task asks to {a2} {q} {o}s from {d}. {C}.",
    "Recovery procedure: {a} {q} {o}s in {d} {c}, calling {t} first.",
    "When asked to {a2} the {q} {o} in {d}, {a} it with {t} {c}.",
    "Checklist for tasks that {a} {o}s in {d} that are {q}, {c}.",
]
_QUERY_TEMPLATES = [
    "{a2} all {q} {o}s in {d}",
    "can you {a} the {q} {d} {o}s {c}",
    "I need to {a} a {o} in {d} that is {q}",
    "please {a2} every {q} {d} {o} {c}",
    "{a} {d} {o}s that are {q}",
    "help me {a} the {q} {o} in our {d} account {c}",
    "how do I {a2} {q} {o}s in {d}?",
    "task: {a} {q} {o} records in {d} {c}",
]


def _fill(template: str, rng: random.Random) -> tuple[str, dict[str, Any]]:
    d, o, tools = rng.choice(_DOMAINS)
    a, a2 = rng.choice(_ACTIONS)
    q = rng.choice(_QUALIFIERS)
    c = rng.choice(_CONSTRAINTS)
    t = rng.choice(tools)
    text = template.format(a=a, a2=a2, q=q, o=o, d=d, c=c, C=c[0].upper() + c[1:], t=t)
    return text, {"domain": d, "action": a, "qualifier": q, "tools": tools, "tool": t, "object": o}


def synthetic_skills(n: int, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` distinct skills (name, description, body, tools, tags); prefixes are stable across n."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    i = 0
    while len(out) < n:
        desc, f = _fill(rng.choice(_TEMPLATES), rng)
        i += 1
        key = desc
        if key in seen:  # keep descriptions distinct: add a variant marker drawn from the vocab
            desc = f"{desc} Variant {rng.choice(_QUALIFIERS)} #{i}."
        seen.add(desc)
        slug = re.sub(r"[^a-z0-9]+", "-", f"{f['action']} {f['qualifier']} {f['domain']} {f['object']}".lower()).strip("-")
        name = f"{slug[:50].strip('-')}-{len(out)}"
        body = (f"1. Call `{f['tool']}` to list the {f['object']}s.\n"
                f"2. Keep only the {f['qualifier']} ones.\n"
                f"3. {f['action'].capitalize()} each, checking the response before the next call.\n"
                f"4. Report what changed.")
        out.append({"name": name, "description": desc, "body": body, "tools": [f["tool"]],
                    "tags": [f["domain"].split()[0], f["action"]]})
    return out


def embedding_text(skill: dict[str, Any]) -> str:
    """The text skillbank embeds for a skill (mirrors SkillContent.embedding_text)."""
    from skillbank.models import SkillContent

    return SkillContent(name=skill["name"], description=skill["description"], body=skill["body"],
                        tools=tuple(skill["tools"]), tags=tuple(skill["tags"])).embedding_text()


def synthetic_queries(n: int = 200, seed: int = 11) -> list[str]:
    """``n`` distinct, realistic task texts (never equal to a skill text)."""
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        text, _ = _fill(rng.choice(_QUERY_TEMPLATES), rng)
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


# -- embeddings ---------------------------------------------------------------------------------

def get_embedder(quick: bool) -> Any:
    """The real bundled MiniLM, or the model-free hash embedder in --quick smoke runs."""
    from skillbank.embed import HashEmbedder, MiniLMEmbedder

    return HashEmbedder(384) if quick else MiniLMEmbedder()


def cached_vectors(texts: Sequence[str], embedder: Any, tag: str, *, batch: int = 2048,
                   log: Any = print) -> Any:
    """Embed ``texts`` once and cache to ``benchmarks/out/<tag>-<embedder>-<n>.npy``.

    A cache for a larger n built from the same generator is reused by slicing its prefix.
    """
    import numpy as np

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    safe = re.sub(r"[^a-z0-9]+", "_", embedder.name.lower())
    n = len(texts)
    path = OUT_DIR / f"{tag}-{safe}-{n}.npy"
    if path.exists():
        return np.load(path)
    for other in sorted(OUT_DIR.glob(f"{tag}-{safe}-*.npy")):
        m = int(other.stem.rsplit("-", 1)[1])
        if m >= n:
            return np.load(other, mmap_mode="r")[:n].copy()
    # Resumable: each batch is saved as it finishes, so an interrupted run loses one batch.
    part_dir = OUT_DIR / f"{tag}-{safe}-{n}.parts"
    part_dir.mkdir(exist_ok=True)
    parts = []
    t0 = time.perf_counter()
    for start in range(0, n, batch):
        part = part_dir / f"{start:09d}-{batch}.npy"
        if part.exists():
            parts.append(np.load(part))
            continue
        vecs = embedder.embed(list(texts[start:start + batch])).astype(np.float32)
        part_dir.mkdir(exist_ok=True)  # another process may have finished and removed it
        np.save(part, vecs)
        parts.append(vecs)
        done = min(n, start + batch)
        log(f"  embedded {done}/{n} {tag} texts ({(done - start) / (time.perf_counter() - t0):.0f}/s this batch)")
        t0 = time.perf_counter()
    vectors = np.vstack(parts).astype(np.float32)
    np.save(path, vectors)
    import shutil

    shutil.rmtree(part_dir, ignore_errors=True)
    return vectors
