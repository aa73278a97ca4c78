"""Reports of a measurement: one self-contained HTML page, a JSON file, and a terminal table.

:func:`write_report` writes the HTML page (inline CSS, matplotlib figures embedded as base64
PNG, no external file or script) and a JSON file with every number and every trial. The page
states plainly when the policy was simulated. It is the jinja2 template
``templates/report.html.j2`` rendered with autoescape: this module hands it plain data (text,
numbers, tables of cells), and every value, agent text included, is escaped on the way out.
:func:`rich_table` builds the terminal table.

Over 500 lines because the HTML page, JSON file and terminal table all render one measurement.
"""

from __future__ import annotations

import base64
import io
import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from skillbank.consistency.result import MeasureResult
from skillbank.consistency._trials import ARM_WITH, ARM_WITHOUT
from skillbank._splits import ALL_SPLITS, describe_split

if TYPE_CHECKING:  # pragma: no cover
    from rich.table import Table

__all__ = ["write_report", "report_data", "rich_table", "SIMULATED_NOTE", "split_label"]

SIMULATED_NOTE = (
    "These numbers come from a simulated policy (skillbank_harness.envs.SimulatedPolicy, a scripted "
    "chat model driven by the system message and the tool schemas). They show the machinery "
    "working: logging, evolution, injection and measurement. They are not a claim about any "
    "real model. Measure your own with `skillbank eval --model provider:model`."
)

_ARM_COLOURS = {ARM_WITHOUT: "#8c8c8c", ARM_WITH: "#1f77b4"}
_EXTRA_COLOURS = ["#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]

def split_label(split: str | None) -> str:
    return describe_split(split)


# --------------------------------------------------------------------------------- helpers


def _pct(value: float | None, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{100 * value:.{digits}f}%"


@dataclass(frozen=True)
class _Change:
    """A table cell holding a change in points, coloured by whether it is an improvement."""

    text: str
    cls: str = ""  # "pos", "neg" or "" (no change)


def _signed(value: float | None, lower_is_better: bool = False) -> _Change:
    """``+12.3 pts``, green when it is an improvement, red when it is a regression."""
    if value is None:
        return _Change("–")
    good = -value if lower_is_better else value
    return _Change(f"{100 * value:+.1f} pts", "pos" if good > 1e-12 else "neg" if good < -1e-12 else "")


def _ci(pair: Sequence[float] | None) -> str:
    return "–" if not pair else f"[{_pct(pair[0], 0)}, {_pct(pair[1], 0)}]"


def _table(headers: Sequence[str], rows: Iterable[Sequence[Any]], left: int = 1,
           text: Sequence[int] = ()) -> dict[str, Any]:
    """A table for the template; the first ``left`` columns and those in ``text`` are
    left-aligned (the rest are numbers)."""
    return {"headers": list(headers), "rows": [list(r) for r in rows],
            "left": set(range(left)) | set(text)}


def _colour(arm: str, i: int) -> str:
    return _ARM_COLOURS.get(arm, _EXTRA_COLOURS[i % len(_EXTRA_COLOURS)])


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _views(result: MeasureResult) -> list[str | None]:
    splits = result.splits
    return [None] + splits if len(splits) > 1 else [None]


# --------------------------------------------------------------------------------- figures


def _fig_pass_k(result: MeasureResult) -> str:
    """pass^k (solid) and pass@k (dashed) over k, one panel per split, one line per arm."""
    plt = _pyplot()
    views = _views(result)
    fig, axes = plt.subplots(1, len(views), figsize=(4.2 * len(views), 3.4), squeeze=False,
                             sharey=True)
    for ax, view in zip(axes[0], views):
        for i, arm in enumerate(result.arms):
            if not result._select(arm, view):
                continue
            s = result.summary(arm, view)
            ks = list(s.ks)
            ax.plot(ks, [s.pass_hat_k[k] for k in ks], marker="o", color=_colour(arm, i),
                    label=f"{arm}: pass^k")
            ax.plot(ks, [s.pass_at_k[k] for k in ks], marker=".", linestyle="--",
                    color=_colour(arm, i), alpha=0.6, label=f"{arm}: pass@k")
        ax.set_title(split_label(view))
        ax.set_xlabel("k")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xticks(range(1, result.trials + 1) if result.trials <= 10 else ax.get_xticks())
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("share of tasks")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=max(1, len(labels)), fontsize=8,
               frameon=False)
    fig.suptitle(f"pass^k (solid) and pass@k (dashed) over k ({result.trials} trials per task and arm)")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return _png(fig)


def _fig_by_type(result: MeasureResult) -> str:
    """pass^k at the headline k per task type, grouped bars per arm, one panel per split."""
    plt = _pyplot()
    k = result.key_k
    views = _views(result)
    types = sorted(set(result.task_types().values()))
    fig, axes = plt.subplots(1, len(views), figsize=(max(4.2, 0.9 * len(types) + 2) * len(views), 3.6),
                             squeeze=False, sharey=True)
    width = 0.8 / max(1, len(result.arms))
    for ax, view in zip(axes[0], views):
        for i, arm in enumerate(result.arms):
            if not result._select(arm, view):
                continue
            breakdown = result.by_type(arm, view, k)
            xs = [j + (i - (len(result.arms) - 1) / 2) * width for j in range(len(types))]
            ys = [breakdown[t].pass_hat_k[k] if t in breakdown else 0.0 for t in types]
            ax.bar(xs, ys, width=width, color=_colour(arm, i), label=arm)
        ax.set_xticks(range(len(types)))
        ax.set_xticklabels(types, rotation=30, ha="right", fontsize=8)
        ax.set_ylim(0, 1.02)
        ax.set_title(split_label(view))
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel(f"pass^{k}")
    axes[0][-1].legend(fontsize=8)
    fig.suptitle(f"pass^{k} per task type")
    fig.tight_layout()
    return _png(fig)


def _fig_cost(result: MeasureResult) -> str:
    return _png(_cost_figure(result))


def _cost_figure(result: MeasureResult) -> Any:
    """Mean cost per trial per arm and split: steps, tokens, latency, limit-hit rate."""
    plt = _pyplot()
    views = _views(result)
    panels = [("steps", "steps / trial"), ("tokens", "tokens / trial"),
              ("latency_s", "latency (s) / trial"), ("limit_hit_rate", "limit-hit rate")]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.3 * len(panels), 3.4), squeeze=False)
    width = 0.8 / max(1, len(result.arms))
    for ax, (key, label) in zip(axes[0], panels):
        for i, arm in enumerate(result.arms):
            xs, ys = [], []
            for j, view in enumerate(views):
                if result._select(arm, view):
                    xs.append(j + (i - (len(result.arms) - 1) / 2) * width)
                    ys.append(result.cost(arm, view)[key])
            ax.bar(xs, ys, width=width, color=_colour(arm, i), label=arm)
        ax.set_xticks(range(len(views)))
        ax.set_xticklabels([split_label(v).split(" (")[0] for v in views], fontsize=8,
                           rotation=15)
        ax.set_title(label, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        if key == "limit_hit_rate":
            ax.set_ylim(0, 1.02)
    # One legend for the four panels, under them: inside a panel it covered the bars.
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=max(1, len(labels)), fontsize=8, frameon=False)
    fig.suptitle("cost per trial")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def _fig_progress(progress: Sequence[Mapping[str, Any]]) -> str | None:
    fig = _progress_figure(progress)
    return _png(fig) if fig is not None else None


def _progress_figure(progress: Sequence[Mapping[str, Any]]) -> Any:
    """pass^k and pass@k at every stage given (e.g. baseline, after each round), each point
    labelled with its value; what differs between the stages is said under the figure."""
    points = [p for p in progress if p.get("pass_hat_k") is not None]
    if len(points) < 2:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(5.0, 1.8 * len(points)), 3.4))
    xs = list(range(len(points)))
    k = points[0].get("k", "k")
    series = [("pass_hat_k", f"pass^{k}", "o", "-", 1.0)]
    if all(p.get("pass_at_k") is not None for p in points):
        series.append(("pass_at_k", f"pass@{k}", ".", "--", 0.6))
    for key, label, marker, style, alpha in series:
        ys = [p[key] for p in points]
        ax.plot(xs, ys, marker=marker, linestyle=style, color=_ARM_COLOURS[ARM_WITH], alpha=alpha, label=label)
        for x, y in zip(xs, ys):
            ax.annotate(f"{100 * y:.0f}%", (x, y), textcoords="offset points", xytext=(0, 6),
                        ha="center", fontsize=8, alpha=alpha)
    ax.set_xticks(xs)
    ax.set_xticklabels([str(p["label"]) for p in points], fontsize=8)
    ax.set_xlim(-0.5, len(points) - 0.5)
    ax.set_ylim(-0.02, 1.12)
    ax.set_ylabel("share of tasks")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))  # outside: no point is covered
    ax.set_title(points[0].get("title", "evolution set over the stages of the run"), fontsize=10)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------------- HTML


def _headline_rows(result: MeasureResult, data: Mapping[str, Any]) -> list[list[Any]]:
    k = result.key_k
    rows = []
    for view in _views(result):
        block = data["splits"][view or ALL_SPLITS]
        for arm, numbers in block["arms"].items():
            s = numbers["summary"]
            rows.append([
                split_label(view), arm, str(s["n_tasks"]), str(s["n_trials"]),
                _pct(s["pass_hat_k"]["1"]), _pct(s["pass_hat_k"][str(k)]),
                _ci(numbers["ci"]["pass_hat_k"][str(k)]), _pct(s["pass_at_k"][str(k)]),
                _pct(s["gap"][str(k)]), _ci(numbers["ci"]["gap"][str(k)]),
                f'{s["mean_task_variance"]:.3f}', _pct(s["identical_share"]),
                _pct(numbers["type_spread"]),
            ])
    return rows


def _delta_rows(result: MeasureResult, data: Mapping[str, Any]) -> list[list[Any]]:
    rows = []
    for view in _views(result):
        block = data["splits"][view or ALL_SPLITS]
        if "delta" not in block:
            continue
        for metric, d in block["delta"].items():
            name = {"pass_hat_k": f"pass^{d['k']}", "pass_at_k": f"pass@{d['k']}",
                    "gap": f"gap pass@{d['k']} − pass^{d['k']}"}[metric]
            rows.append([split_label(view), name, _signed(d["delta"], lower_is_better=metric == "gap"),
                         _ci(d["ci"]), str(d["n_tasks"])])
    return rows


def _type_table(result: MeasureResult, data: Mapping[str, Any]) -> dict[str, Any]:
    k = result.key_k
    rows = []
    for view in _views(result):
        block = data["splits"][view or ALL_SPLITS]
        for t in sorted({t for arm in block["arms"].values() for t in arm["by_type"]}):
            row = [split_label(view), t]
            for arm in result.arms:
                s = block["arms"].get(arm, {}).get("by_type", {}).get(t)
                row += [str(s["n_tasks"]), _pct(s["pass_hat_k"][str(k)]), _pct(s["pass_at_k"][str(k)])] \
                    if s else ["–", "–", "–"]
            rows.append(row)
    headers = ["set", "type"]
    for arm in result.arms:
        headers += [f"{arm}: tasks", f"{arm}: pass^{k}", f"{arm}: pass@{k}"]
    return _table(headers, rows, left=2)


def _cost_table(result: MeasureResult, data: Mapping[str, Any]) -> dict[str, Any]:
    rows = []
    for view in _views(result):
        block = data["splits"][view or ALL_SPLITS]
        for arm, numbers in block["arms"].items():
            c = numbers["cost"]
            limits = ", ".join(f"{name} {n}" for name, n in numbers["limits"].items()) or "–"
            rows.append([split_label(view), arm, f'{c["steps"]:.2f}', f'{c["model_turns"]:.2f}',
                         f'{c["tokens"]:.0f}', f'{c["latency_s"]:.3f}', _pct(c["limit_hit_rate"]), limits])
    return _table(["set", "arm", "steps", "model turns", "tokens", "latency (s)", "limit-hit rate",
                   "trials hitting each limit"], rows, left=2, text=(7,))


def _result_view(label: str, result: MeasureResult, data: Mapping[str, Any]) -> dict[str, Any]:
    """What the template shows of one measurement."""
    k = result.key_k
    timing = (f"{result.ran} trials run, {result.skipped} resumed, {result.wall_time_s:.1f} s"
              if result.wall_time_s is not None else None)
    return {
        "label": label, "k": k, "run_id": result.run_id, "n_tasks": len(result.tasks),
        "trials": result.trials, "n_arms": len(result.arms), "model": result.model or "unnamed",
        "simulated": result.simulated, "timing": timing,
        "snapshot": (result.bank_snapshot or "–").split(":")[-1][:12],
        "warnings": list(result.warnings),
        "consistency": _table(["set", "arm", "tasks", "trials", "pass^1", f"pass^{k}", "95% CI", f"pass@{k}",
                               f"gap @{k}", "gap 95% CI", "mean task var.", "all-identical", "type spread"],
                              _headline_rows(result, data), left=2),
        "deltas": _table(["set", "metric", "change", "95% CI (bootstrap over tasks)", "tasks"],
                         _delta_rows(result, data), left=2),
        "fig_pass_k": _fig_pass_k(result),
        "by_type": _type_table(result, data),
        "fig_by_type": _fig_by_type(result),
        "cost": _cost_table(result, data),
        "fig_cost": _fig_cost(result),
        "attribution": _attribution_blocks(result, data),
        "skills": _skills_view(result.skills) if result.skills else None,
    }


_MOVED_ROWS = 12  # tasks whose pass^k moved, shown per set (all of them are in the JSON)
_SKILLS_PER_TASK = 4


def _skill_list(skills: Sequence[Mapping[str, Any]]) -> str:
    shown = ", ".join(f'{s["name"]} ({s["trials"]})' for s in skills[:_SKILLS_PER_TASK])
    more = len(skills) - _SKILLS_PER_TASK
    return (shown + (f", +{more} more" if more > 0 else "")) or "none"


def _attribution_blocks(result: MeasureResult, data: Mapping[str, Any]) -> list[dict[str, Any]]:
    blocks = []
    # Per set when there are several (the pooled view would repeat them), else all tasks.
    views: list[str | None] = list(result.splits) if len(result.splits) > 1 else [None]
    for view in views:
        attr = data["splits"][view or ALL_SPLITS].get("attribution")
        if not attr or not (attr["skills"] or attr["tasks"]):
            continue
        k = attr["k"]
        skills = [[s["name"], str(s["trials_injected"]), str(s["tasks"]), _pct(s["success_when_injected"]),
                   _pct(s["baseline_success_same_tasks"]), _signed(s["delta"])] for s in attr["skills"]]
        tasks = [[t["task_id"], t["type"], _pct(t["pass_hat_k"][attr["baseline"]]),
                  _pct(t["pass_hat_k"][attr["treatment"]]), _signed(t["delta"]), _skill_list(t["skills"])]
                 for t in attr["tasks"][:_MOVED_ROWS]]
        blocks.append({
            "set": split_label(view), "k": k, "n_moved": len(attr["tasks"]),
            "more": len(attr["tasks"]) - len(tasks),
            "skills": _table(["skill", "trials injected", "tasks", "success when injected",
                              "same tasks without the bank", "difference"], skills) if skills else None,
            "tasks": _table(["task", "type", f"pass^{k} without", f"pass^{k} with", "change",
                             "most injected skills (trials)"], tasks, left=2, text=(5,)) if tasks else None,
        })
    return blocks


def _skills_view(skills: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    rows = []
    for s in skills:
        splits = ", ".join(f"{name}: {n}" for name, n in s["evidence_splits"].items()) or "none"
        rows.append([s["name"], s["status"], str(s["version"]), s["kind"], ", ".join(s["authors"]),
                     str(s["evidence"]), splits, _Change("yes", "neg") if s["held_out_evidence"] else "no"])
    return {"leaked": [s["name"] for s in skills if s["held_out_evidence"]],
            "table": _table(["skill", "status", "version", "kind", "authors", "evidence runs", "evidence by set",
                             "held-out evidence"], rows, left=2, text=(3, 4, 6, 7))}


def _evolution_view(evolution: Sequence[Mapping[str, Any]],
                    progress: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    rows = [[str(r.get("round", "–")), str(r.get("trajectories", "–")), str(r.get("proposed", "–")),
             str(r.get("candidates", "–")), str(r.get("promoted", "–")), str(r.get("rejected", "–")),
             str(r.get("evolved_on", "–")), str(r.get("note", ""))] for r in evolution]
    return {
        "table": _table(["round", "trajectories read", "proposed", "new candidates", "promoted", "rejected",
                         "evolved on", "note"], rows, left=1, text=(6, 7)),
        "progress": _fig_progress(progress),
        "stages": [{"label": " ".join(str(p["label"]).split()), "note": p["note"]}
                   for p in progress if p.get("note")],
    }


def _template() -> Any:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(loader=PackageLoader("skillbank.consistency", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=False, keep_trailing_newline=False)
    return env.get_template("report.html.j2")


def _as_results(results: Any) -> dict[str, MeasureResult]:
    if isinstance(results, MeasureResult):
        return {results.run_id: results}
    if isinstance(results, Mapping):
        return dict(results)
    return {r.run_id: r for r in results}


def report_data(results: Any, *, title: str = "", notes: Sequence[str] = (),
                evolution: Sequence[Mapping[str, Any]] | None = None,
                extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON document :func:`write_report` writes: every number of every result."""
    named = _as_results(results)
    simulated = any(r.simulated for r in named.values())
    return {
        "title": title,
        "generated_at": datetime.now(timezone.utc).isoformat(),
        "simulated": simulated,
        "simulated_note": SIMULATED_NOTE if simulated else None,
        "notes": list(notes),
        "results": {label: r.to_dict() for label, r in named.items()},
        "evolution": list(evolution or []),
        **dict(extra or {}),
    }


def write_report(
    results: MeasureResult | Mapping[str, MeasureResult] | Sequence[MeasureResult],
    path_html: str | Path,
    path_json: str | Path | None = None,
    *,
    title: str = "skillbank consistency report",
    notes: Sequence[str] = (),
    evolution: Sequence[Mapping[str, Any]] | None = None,
    progress: Sequence[Mapping[str, Any]] = (),
    extra: Mapping[str, Any] | None = None,
) -> tuple[Path, Path]:
    """Write the HTML report and its JSON twin; returns both paths.

    Args:
        results: One result, or several (``label -> result``, shown in that order).
        path_html: Where the page goes.
        path_json: Where the numbers go; default: ``path_html`` with ``.json``.
        title: The page title.
        notes: Paragraphs shown under the title (plain text).
        evolution: One dict per evolution round (``round``, ``trajectories``, ``proposed``,
            ``candidates``, ``promoted``, ``rejected``, ``evolved_on``, ``note``), shown as a
            table.
        progress: Points ``{label, pass_hat_k, pass_at_k, k}`` plotted under the evolution
            table (e.g. the evolution set at baseline and after each round); a point's ``note``
            (what it measured, what changed since the previous one) is listed under the figure.
        extra: More top-level JSON fields.
    """
    named = _as_results(results)
    if not named:
        raise ValueError("write_report needs at least one result")
    path_html = Path(path_html)
    path_json = Path(path_json) if path_json is not None else path_html.with_suffix(".json")
    data = report_data(named, title=title, notes=notes, evolution=evolution,
                       extra={"progress": list(progress), **dict(extra or {})})

    page = _template().render(
        title=title, generated=data["generated_at"][:19].replace("T", " "), json_name=path_json.name,
        simulated_note=SIMULATED_NOTE if data["simulated"] else None, notes=list(notes),
        evolution=_evolution_view(evolution, progress) if evolution else None,
        results=[_result_view(label, result, data["results"][label]) for label, result in named.items()],
    )
    path_html.parent.mkdir(parents=True, exist_ok=True)
    path_json.parent.mkdir(parents=True, exist_ok=True)
    path_html.write_text(page + "\n", encoding="utf-8")
    path_json.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n",
                         encoding="utf-8")
    return path_html, path_json


# ------------------------------------------------------------------------------ terminal


def rich_table(results: MeasureResult | Mapping[str, MeasureResult], *, title: str | None = None
               ) -> "Table":
    """A rich table: one row per (result, split, arm) with pass^1, pass^k, pass@k, the gap
    pass@k − pass^k, the changes against the ``without`` arm (in points), mean steps per trial
    and the share of trials that hit a limit."""
    from rich import box
    from rich.table import Table

    named = _as_results(results)
    k = min(r.key_k for r in named.values())

    # Space-separated columns without padding: the whole table fits an 80-column terminal.
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 0),
                  pad_edge=False, caption=f"gap = pass@{k} − pass^{k}; Δ = with minus without, "
                  "in points; steps and limit hits per trial", caption_justify="left")
    multi = len(named) > 1
    if multi:
        table.add_column("measurement")
    for col in ("set", "arm"):
        table.add_column(col, no_wrap=True)
    # With one trial per task pass^k is pass^1: show it once.
    one = ("pass^1",) if k != 1 else ()
    for col in ("tasks", *one, f"pass^{k}", f"pass@{k}", "gap", f"Δpass^{k}", "Δgap",
                "steps", "limit hits"):
        table.add_column(col, justify="right", no_wrap=True)
    for label, result in named.items():
        for view in _views(result):
            head = result.headline(view)
            base = head.get(ARM_WITHOUT)
            for arm in head:
                s = result.summary(arm, view, ks=sorted({1, k}))
                cost = result.cost(arm, view)
                d_hat = d_gap = "–"
                if base is not None and arm != ARM_WITHOUT:
                    d_hat = _signed_plain(s.pass_hat_k[k] - base[f"pass^{k}"])
                    d_gap = _signed_plain(s.gap[k] - base["gap"], lower_is_better=True)
                row = [describe_split(view, short=True), arm, str(s.n_tasks),
                       *([_pct(s.pass_hat_k[1], 0)] if one else []), _pct(s.pass_hat_k[k], 0),
                       _pct(s.pass_at_k[k], 0), _pct(s.gap[k], 0), d_hat, d_gap,
                       f'{cost["steps"]:.1f}', _pct(cost["limit_hit_rate"], 0)]
                table.add_row(*([label] if multi else []), *row)
            if multi or len(_views(result)) > 1:
                table.add_section()
    return table


def _signed_plain(value: float, lower_is_better: bool = False) -> str:
    text = f"{100 * value:+.0f}"
    good = -value if lower_is_better else value
    return f"[green]{text}[/]" if good > 1e-12 else f"[red]{text}[/]" if good < -1e-12 else text
