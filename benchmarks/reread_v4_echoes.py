"""A post-hoc reading of protocol v4, NOT the protocol's figure (issue 29): a success whose reply
echoes the skills block or the lesson ("<skill", "No tool."), or is tool-call text, counted as a
failure. Written after the run, from its kept transcripts:

    python benchmarks/reread_v4_echoes.py
"""
import collections
import gzip
import json
import re
from pathlib import Path

RUNS = Path(__file__).resolve().parent / "runs"
tr = {}
for l in gzip.open(str(RUNS / 'consistency_transcripts_v4.jsonl.gz'), 'rt'):
    r = json.loads(l); tr[r['id']] = r
DEGENERATE = re.compile(r"<skill|<tool name=|\bno tools?\b|use-no-tools|^\s*(\{\{|```|\{)", re.I)
rows = [json.loads(l) for l in open(str(RUNS / 'consistency_trials_v4.jsonl'))]
tiers = collections.defaultdict(lambda: collections.defaultdict(lambda: collections.defaultdict(list)))
flagged = collections.Counter()
for r in rows:
    if r['phase'] in ('evidence', 'gate'):
        continue
    tier = r['phase'].split('/')[0]
    ans = (tr[r['trajectory_id']]['final_answer'] or '') if r['trajectory_id'] in tr else ''
    ok = bool(r['success'])
    if ok and DEGENERATE.search(ans):
        ok = False; flagged[(tier, r['arm'])] += 1
    tiers[tier][r['arm']][r['task_id'].split('#')[0]].append(ok)
for tier, arms in tiers.items():
    out = {a: sum(all(v) for v in t.values()) / len(t) for a, t in arms.items()}
    print(tier, {a: f"{100*x:.0f}%" for a, x in out.items()}, 'successes re-read as failures:', {a: flagged[(tier, a)] for a in arms})
