"""Self-check of the sealed templates: reference runs pass, do-nothing runs fail, seeds vary.

Run: cd /work/sealed-author && HF_HUB_OFFLINE=1 /work/main/.venv/bin/python selfcheck.py
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

import sealed  # noqa: F401  (registers the templates)
from skillbank_harness.envs.base import TEMPLATES

SEEDS = range(10)
PREFIX = "sealed_"


def make_env(tpl, spec):
    return tpl.env_cls(spec.state, removed=spec.removed, removed_params=spec.removed_params, reply=spec.reply)


def reference_run(tpl, spec):
    env = make_env(tpl, spec)
    tools = {t.name: t for t in env.tools()}
    messages = [HumanMessage(spec.input)]
    answer = ""
    n = 0
    for step in spec.reference:
        if step.kind == "call":
            assert step.tool in tools, f"reference calls unavailable tool {step.tool}"
            n += 1
            cid = f"call_{n}"
            messages.append(AIMessage(content="", tool_calls=[{"name": step.tool, "args": step.args, "id": cid}]))
            before = len(env.calls(ok_only=False))
            out = tools[step.tool].invoke(step.args)
            new = env.calls(ok_only=False)[before:]
            assert new and new[-1].ok, f"reference call {step.tool}({step.args}) failed: {out}"
            messages.append(ToolMessage(content=str(out), tool_call_id=cid, name=step.tool))
        elif step.kind == "ask":
            messages.append(AIMessage(content=step.text))
            reply = env.user_reply(step.text)
            messages.append(HumanMessage(reply or ""))
        else:
            answer = step.text
            messages.append(AIMessage(content=answer))
    return env, answer, messages, n


def noop_run(tpl, spec):
    env = make_env(tpl, spec)
    messages = [HumanMessage(spec.input), AIMessage(content="Done.")]
    return env, "Done.", messages


def main() -> int:
    ids = sorted(t for t in TEMPLATES if t.startswith(PREFIX))
    failures = []
    rows = []
    for tid in ids:
        tpl = TEMPLATES[tid]
        inputs = set()
        ncalls = None
        for seed in SEEDS:
            spec = tpl.build(random.Random(seed))
            json.dumps(spec.state)  # state must be JSON-able
            inputs.add(spec.input)
            try:
                env, answer, messages, n = reference_run(tpl, spec)
            except AssertionError as exc:
                failures.append(f"{tid} seed {seed}: reference run broke: {exc}")
                continue
            ncalls = n if ncalls is None else ncalls
            reasons = spec.check(env, answer, messages)
            if reasons:
                failures.append(f"{tid} seed {seed}: reference fails: {reasons}")
            if n > 3:
                failures.append(f"{tid}: reference uses {n} calls (> 3)")
            env, answer, messages = noop_run(tpl, spec)
            reasons = spec.check(env, answer, messages)
            if tid in sealed.NOOP_OK:
                if reasons:
                    failures.append(f"{tid} seed {seed}: do-nothing should pass here but fails: {reasons}")
            elif not reasons:
                failures.append(f"{tid} seed {seed}: do-nothing run passes")
            if spec.hints:
                failures.append(f"{tid}: hints should be empty")
            if tpl.type == "disambiguation" and spec.reply is None:
                failures.append(f"{tid}: disambiguation without a reply")
        if len(inputs) < 2:
            failures.append(f"{tid}: seeds give identical inputs")
        rows.append((tid, tpl.family, tpl.type, ncalls))

    print(f"{'template':58} {'toolset':18} {'type':15} calls")
    for tid, fam, typ, n in rows:
        print(f"{tid:58} {fam:18} {typ:15} {n}")
    by = Counter((fam, typ) for _, fam, typ, _ in rows)
    print()
    for fam in sorted({f for _, f, _, _ in rows}):
        counts = {t: by[(fam, t)] for t in ("base", "capability", "disambiguation")}
        print(f"{fam:18} total={sum(counts.values())} {counts}")
    print(f"templates: {len(rows)}; types: {dict(Counter(t for _, _, t, _ in rows))}")
    if failures:
        print(f"\nFAILURES ({len(failures)}):")
        for f in failures:
            print("  " + f)
        return 1
    print("\nSELFCHECK OK: all references pass, all do-nothing runs fail (except small talk), seeds vary.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
