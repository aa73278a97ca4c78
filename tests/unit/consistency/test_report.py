"""The HTML/JSON report and the terminal table."""

from __future__ import annotations

import base64
import json
import random
from html.parser import HTMLParser

from rich.console import Console

from skillbank.consistency.report import SIMULATED_NOTE, rich_table, write_report
from skillbank.consistency.runner import SimpleTask, measure


def _result(bank, run_id="rep", simulated=True):
    tasks = [SimpleTask(id=f"t{i}", type="abc"[i % 3], input=f"task {i}",
                        split="train" if i < 6 else "heldout") for i in range(9)]

    def factory(arm, bank_, task):
        return lambda spec: random.Random(spec.seed).random() < (0.5 if arm == "without" else 0.85)

    return measure(factory, tasks, trials=4, bank=bank, run_id=run_id, progress=False,
                   simulated=simulated, model="coin")


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.imgs: list[str] = []
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if tag == "img":
            self.imgs.append(attrs.get("src", ""))
        for key in ("src", "href"):
            value = attrs.get(key)
            if value and not value.startswith("data:"):
                self.external.append(value)


def test_report_html_is_self_contained_with_png_figures(bank, tmp_path):
    result = _result(bank)
    html_path, json_path = write_report({"final": result}, tmp_path / "out.html",
                                        title="Demo <report>", notes=["a note & more"],
                                        evolution=[{"round": 1, "trajectories": 20, "promoted": 2,
                                                    "evolved_on": "train"}])
    assert json_path == tmp_path / "out.json"
    page = html_path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    parser = _Collect()
    parser.feed(page)
    assert parser.external == []  # nothing loaded from elsewhere
    assert len(parser.imgs) >= 3
    for src in parser.imgs:
        assert src.startswith("data:image/png;base64,")
        png = base64.b64decode(src.split(",", 1)[1])
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
    assert '<img alt="pass^k and pass@k over k" src="data:image/png;base64,' in page
    assert "Demo &lt;report&gt;" in page and "a note &amp; more" in page
    assert "Simulated policy" in page and "not a claim about any" in page
    assert "held-out set" in page and "Evolution rounds" in page
    assert "<script" not in page


def test_report_json_numbers_equal_the_result(bank, tmp_path):
    result = _result(bank)
    _, json_path = write_report(result, tmp_path / "r.html", tmp_path / "numbers.json")
    data = json.loads(json_path.read_text())
    assert data["simulated"] is True and data["simulated_note"] == SIMULATED_NOTE
    got = data["results"]["rep"]
    assert got["trials"] == 4 and got["k"] == 3
    for view, split in (("all", None), ("train", "train"), ("heldout", "heldout")):
        for arm in ("without", "with"):
            summary = result.summary(arm, split)
            block = got["splits"][view]["arms"][arm]
            for k in summary.ks:
                assert block["summary"]["pass_hat_k"][str(k)] == summary.pass_hat_k[k]
                assert block["summary"]["pass_at_k"][str(k)] == summary.pass_at_k[k]
                assert block["summary"]["gap"][str(k)] == summary.gap[k]
            assert block["summary"]["identical_share"] == summary.identical_share
            assert block["ci"]["pass_hat_k"]["3"] == list(result.ci(arm, split, 3))
            assert block["cost"] == result.cost(arm, split)
            types = result.by_type(arm, split, 3)
            assert {t: s["pass_hat_k"]["3"] for t, s in block["by_type"].items()} == {
                t: s.pass_hat_k[3] for t, s in types.items()}
        assert got["splits"][view]["delta"]["pass_hat_k"]["delta"] == result.delta(split, 3)["delta"]
    assert len(got["records"]) == len(result.records)
    assert [r["success"] for r in got["records"]] == [r.success for r in result.records]


def test_report_without_simulation_has_no_banner(bank, tmp_path):
    result = _result(bank, simulated=False)
    html_path, json_path = write_report([result], tmp_path / "x.html")
    assert "Simulated policy" not in html_path.read_text()
    assert json.loads(json_path.read_text())["simulated"] is False


def test_report_single_arm(tmp_path):
    tasks = [SimpleTask(id=f"t{i}", type="a", input="x") for i in range(3)]
    result = measure(lambda arm, b, t: (lambda: True), tasks, trials=2, arms=("without",),
                     progress=False)
    html_path, _ = write_report(result, tmp_path / "one.html")
    assert "data:image/png;base64," in html_path.read_text()


def test_rich_table(bank):
    result = _result(bank)
    console = Console(width=80, record=True)
    console.print(rich_table(result, title="consistency"))
    text = console.export_text()
    assert "pass^3" in text and "pass@3" in text and "held-out" in text and "train" in text
    assert "…" not in text  # fits an 80-column terminal without truncation
    head = result.headline("heldout")
    row = next(line for line in text.splitlines() if line.strip().startswith("held-out") and " with " in line)
    assert f"{100 * head['with']['pass^3']:.0f}%" in row
    assert f"{100 * (head['with']['pass^3'] - head['without']['pass^3']):+.0f}" in row



def test_rich_table_with_one_trial_shows_pass_hat_1_once(bank):
    tasks = [SimpleTask(id=f"t{i}", type="a", input=f"task {i}") for i in range(4)]
    result = measure(lambda arm, bank_, task: (lambda spec: task.id != "t0"), tasks, trials=1, bank=bank,
                     run_id="one-trial", progress=False, simulated=True, model="coin")
    console = Console(width=80, record=True)
    console.print(rich_table(result))
    lines = console.export_text().splitlines()
    header = next(line for line in lines if "pass@1" in line)
    assert header.split().count("pass^1") == 1
    row = next(line for line in lines if line.split()[:2] == ["all", "with"])
    assert row.split()[3] == "75%"  # tasks, then pass^1 straight after

HOSTILE = '<img src=x onerror="alert(1)"></td><script>bad()</script>'


def test_every_value_on_the_page_is_escaped(bank, tmp_path):
    """Agent text reaches the page only through the template's autoescape: no field is left raw."""
    result = _result(bank)
    result.warnings.append(HOSTILE)
    result.model = HOSTILE
    evolution = [{key: HOSTILE for key in ("round", "trajectories", "proposed", "candidates", "promoted",
                                           "rejected", "evolved_on", "note")}]
    progress = [{"label": HOSTILE, "k": 3, "pass_hat_k": 0.1, "pass_at_k": 0.5, "note": HOSTILE},
                {"label": "after", "k": 3, "pass_hat_k": 0.6, "pass_at_k": 0.9, "note": HOSTILE}]
    html_path, _ = write_report({HOSTILE: result}, tmp_path / "x.html", title=HOSTILE, notes=[HOSTILE],
                                evolution=evolution, progress=progress)
    page = html_path.read_text(encoding="utf-8")
    assert "<script" not in page and "onerror=" not in page.replace("onerror=&#34;", "")
    assert '<img src=x' not in page
    assert page.count("&lt;script&gt;bad()&lt;/script&gt;") >= 5


def test_the_stages_plot_has_a_point_per_stage_and_says_what_differs(bank, tmp_path):
    from skillbank.consistency.report import _progress_figure

    progress = [{"label": "baseline", "k": 3, "pass_hat_k": 0.09, "pass_at_k": 0.68, "note": "no bank"},
                {"label": "after round 1", "k": 3, "pass_hat_k": 0.78, "pass_at_k": 0.99, "note": "8 skills"},
                {"label": "after round 2\n(final)", "k": 3, "pass_hat_k": 0.68, "pass_at_k": 0.99,
                 "note": "round 2 edited x (v2 to v3)"}]
    fig = _progress_figure(progress)
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_xticklabels()] == [p["label"] for p in progress]
    assert [list(line.get_ydata()) for line in ax.get_lines()] == [[0.09, 0.78, 0.68], [0.68, 0.99, 0.99]]
    assert {t.get_text() for t in ax.texts} >= {"9%", "78%", "68%"}
    html_path, _ = write_report(_result(bank), tmp_path / "p.html", evolution=[{"round": 1}], progress=progress)
    page = html_path.read_text(encoding="utf-8")
    assert "<b>after round 2 (final)</b>: round 2 edited x (v2 to v3)" in page


def test_the_cost_legend_covers_no_bar(bank):
    from skillbank.consistency.report import _cost_figure

    fig = _cost_figure(_result(bank))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    assert legends
    bars = [patch.get_window_extent(renderer) for ax in fig.axes for patch in ax.patches]
    assert bars
    for legend in legends:
        box = legend.get_window_extent(renderer)
        assert not any(box.overlaps(bar) for bar in bars)
