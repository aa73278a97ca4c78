"""skillbank serve under load (a bounded test, loopback only, marked slow): 8 readers and two
reviewers promoting and rejecting candidates over real HTTP while evolution rounds run on the
same bank in another process, for LOAD_SECONDS.

Checked afterwards, through the bank's API, its hash chain and ``skillbank skills history``:
no response 5xx, every response within its bound, every action the server answered as done
(303) is exactly one version by "web" and every action it refused (409) is none, every skill's
versions run 1..n without a gap or a repeat, and every round's candidates are in the bank.
Oversized and malformed requests are refused with 413/411/400 (a stale page with 409) and
write nothing.

Found here, and left as a strict xfail below: a round whose gate auto-promotes stops with an
error when a person decides a candidate while the gate validates it, so the load test's rounds
leave their candidates for review (the reviewers decide them) instead of auto-promoting.
"""

from __future__ import annotations

import http.client
import json
import random
import re
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

from conftest import unavailable

try:
    import uvicorn  # noqa: F401

    import skillbank._web  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the install
    unavailable(f"the web extra is missing ({exc}): pip install 'skillbank[web]'", allow_module_level=True)

from serve_support import TOKEN, LiveServer, csrf_and_version
from skillbank import SkillBank
from skillbank.models import SkillStatus
from skillbank._web.security import MAX_BODY

LOAD_SECONDS = 55.0  # the rounds run this long (the test, ~65 s); readers and reviewers until they end
READERS = 8
# Bounds per response. The server is one event loop: a request waits for those before it and,
# for a write, for the SQLite write lock a round may hold (its busy timeout is 30 s); on this
# 2-core machine beside other work, a read is bounded at 10 s and an action at 20 s.
READ_BOUND_S = 10.0
ACTION_BOUND_S = 20.0

ROUND_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[3])
from skillbank import SkillBank
from skillbank.evolution import evolve
from test_hardening_support import family_runs

bank = SkillBank.open(sys.argv[1], embedder="hash")
deadline = time.monotonic() + float(sys.argv[2])
family = 1000
while time.monotonic() < deadline:
    for f in range(family, family + 5):
        for run in family_runs(f):
            bank.trajectories.save(run)
    family += 5
    t0 = time.monotonic()
    # no auto-promotion: the round's candidates wait for review, and the reviewers below
    # decide them (see test_gate_deciding_a_candidate_a_person_just_decided for why)
    report = evolve(bank, lock_timeout=30)
    print(json.dumps({"round": report.round, "seconds": round(time.monotonic() - t0, 2),
                      "made": [c.skill_id for c in report.changes if c.skill_id],
                      "kinds": sorted({str(getattr(c.kind, "value", c.kind)) for c in report.changes})}), flush=True)
bank.close()
print("done", flush=True)
"""


class Client:
    """One keep-alive HTTP connection to the server, with the token cookie; records each
    response as (kind, method, path, status, seconds)."""

    def __init__(self, port: int, log: list, lock: threading.Lock) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.log, self.lock = log, lock

    def request(self, kind: str, method: str, path: str, form: dict | None = None,
                headers: dict | None = None, body: bytes | None = None) -> tuple[int, str, dict]:
        hdrs = {"Cookie": f"skillbank_token={TOKEN}", **(headers or {})}
        if form is not None:
            body = urllib.parse.urlencode(form, doseq=True).encode()
            hdrs["Content-Type"] = "application/x-www-form-urlencoded"
        t0 = time.monotonic()
        try:
            self.conn.request(method, path, body=body, headers=hdrs)
            resp = self.conn.getresponse()
            text = resp.read().decode("utf-8", "replace")
            status, rheaders = resp.status, dict(resp.getheaders())
        except (http.client.HTTPException, OSError) as exc:  # a dropped connection is a failure too
            self.conn.close()
            status, text, rheaders = 599, f"{type(exc).__name__}: {exc}", {}
        elapsed = time.monotonic() - t0
        with self.lock:
            self.log.append((kind, method, path.split("?")[0], status, elapsed))
        return status, text, rheaders


def _fill(bank) -> list[str]:
    """200 active skills (two versions for some) and 30 candidates, 10 of them draft edits;
    the last id is a pinned skill (no round retires it) for the refused requests."""
    ids = []
    with bank.store.transaction():
        for i in range(200):
            s = bank.add_skill(f"load-skill-{i:03d}", f"Handle case {i} of an order.",
                               f"1. Call get_order.\n2. Check case {i}.", tags=["orders", f"t{i % 7}"])
            ids.append(s.id)
        for i in range(0, 200, 10):
            bank.update_skill(ids[i], reason="second version", body=f"1. Call get_order.\n2. Check case {i} twice.")
        for i in range(30):
            cand = bank.add_skill(f"load-cand-{i:02d}", f"Proposed {i}.", f"Try step {i}.",
                                  status=SkillStatus.candidate, author="evolution:rule")
            info = {"kind": "add", "evidence": [], "task_ids": [], "reason": "seeded", "author": "evolution:rule",
                    "round": 0, "name": cand.name}
            if i < 10:
                target = bank.get_skill(ids[i])
                info.update(kind="edit", target=target.id, name=target.name, base_hash=target.content_hash)
            bank.drafts.save_pending(cand.id, info)
        ids.append(bank.add_skill("load-probe", "Probe.", "Never changed by this test.", pinned=True).id)
    return ids


READ_PATHS = ["/skills", "/skills?sort=success&page=2", "/skills?sort=updated&page=3", "/skills?status=candidate",
              "/skills?q=check+the+order+case", "/skills?tag=orders&sort=uses", "/candidates", "/runs", "/prune"]


def _reader(port, ids, stop, log, lock, seed):
    rng, c = random.Random(seed), Client(port, log, lock)
    while not stop.is_set():
        roll = rng.random()
        if roll < 0.5:
            path = rng.choice(READ_PATHS)
        elif roll < 0.8:
            path = f"/skills/{rng.choice(ids)}"
        else:
            path = f"/skills/{rng.choice(ids)}?a=1&b=1"
        c.request("read", "GET", path)


def _reviewer(port, stop, log, lock, actions, seed):
    """Reads the queue, picks a card (two reviewers may pick the same one), promotes or
    rejects it with a reason no other request uses."""
    rng, c = random.Random(seed), Client(port, log, lock)
    n = 0
    while not stop.is_set():
        status, page, _ = c.request("read", "GET", "/candidates")
        cards = re.findall(r'id="cand-([^"]+)"', page) if status == 200 else []
        if not cards:
            time.sleep(0.2)
            continue
        sid = rng.choice(cards[:8])
        verb = "promote" if rng.random() < 0.5 else "reject"
        try:
            hidden = csrf_and_version(page, f"/candidates/{sid}/{verb}")
        except ValueError:
            continue
        card = page[page.index(f'id="cand-{sid}"'):]
        confirms = re.findall(r'name="confirm" value="([^"]+)"', card[:card.index("</section>")])
        n += 1
        tag = f"load-{seed}-{n}"
        status, text, _ = c.request("action", "POST", f"/candidates/{sid}/{verb}",
                                    form={**hidden, "reason": tag, "confirm": confirms})  # the boxes ticked
        actions.append((tag, sid, verb, status, text[text.find("<main"):][:2000]))


def _refusals(port, bank, sid) -> list[tuple[str, int, int]]:
    """Oversized and malformed requests: (what, status, expected)."""
    log, lock = [], threading.Lock()
    c = Client(port, log, lock)
    _, page, _ = c.request("read", "GET", f"/skills/{sid}")
    hidden = csrf_and_version(page, f"/skills/{sid}/edit")
    form = urllib.parse.urlencode({**hidden, "reason": "x" * (MAX_BODY + 10)}).encode()
    out = [("body over MAX_BODY", c.request("bad", "POST", f"/skills/{sid}/retire", body=form,
                                            headers={"Content-Type": "application/x-www-form-urlencoded"})[0], 413)]
    out.append(("reason missing", c.request("bad", "POST", f"/skills/{sid}/retire", form=hidden)[0], 400))
    out.append(("drawn_version not a number", c.request(
        "bad", "POST", f"/skills/{sid}/retire", form={**hidden, "drawn_version": "v2'--", "reason": "r"})[0], 400))
    out.append(("rollback to version 'x'", c.request(
        "bad", "POST", f"/skills/{sid}/rollback", form={**hidden, "to_version": "x", "reason": "r"})[0], 400))
    out.append(("stale page (drawn at v0)", c.request(
        "bad", "POST", f"/skills/{sid}/edit",
        form={**hidden, "drawn_version": "0", "description": "d", "body": "b", "reason": "r"})[0], 409))
    out.append(("page not a number", c.request("bad", "GET", "/skills?page=1e9")[0], 400))
    out.append(("unknown skill", c.request("bad", "GET", "/skills/sk_doesnotexist")[0], 404))
    raw = http.client.HTTPConnection("127.0.0.1", port, timeout=30)  # no Content-Length: chunked
    raw.putrequest("POST", f"/skills/{sid}/retire")
    raw.putheader("Cookie", f"skillbank_token={TOKEN}")
    raw.putheader("Transfer-Encoding", "chunked")
    raw.endheaders()
    raw.send(b"5\r\nabcde\r\n0\r\n\r\n")
    out.append(("no Content-Length", raw.getresponse().status, 411))
    raw.close()
    return out


@pytest.mark.slow
def test_readers_and_reviewers_during_evolution_rounds_lose_nothing(tmp_path):
    path = tmp_path / "bank"
    bank = SkillBank.open(path, embedder="hash")
    ids = _fill(bank)
    probe = ids[-1]
    probe_version = bank.get_skill(probe).version
    tests_dir = str(Path(__file__).resolve().parents[1])
    log, actions, lock, stop = [], [], threading.Lock(), threading.Event()
    with LiveServer(bank) as server:
        assert server.url.startswith("http://127.0.0.1:")  # loopback only
        rounds = subprocess.Popen([sys.executable, "-c", ROUND_CHILD, str(path), str(LOAD_SECONDS), tests_dir],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        threads = [threading.Thread(target=_reader, args=(server.port, ids, stop, log, lock, i), daemon=True)
                   for i in range(READERS)]
        threads += [threading.Thread(target=_reviewer, args=(server.port, stop, log, lock, actions, 100 + i),
                                     daemon=True) for i in range(2)]
        started = time.monotonic()
        for t in threads:
            t.start()
        try:
            out, err = rounds.communicate(timeout=LOAD_SECONDS + 40)
        finally:
            stop.set()
            if rounds.poll() is None:
                rounds.kill()
                rounds.wait()
        for t in threads:
            t.join(timeout=ACTION_BOUND_S + 5)
        elapsed = time.monotonic() - started
        refusals = _refusals(server.port, bank, probe)
    bank.close()

    assert rounds.returncode == 0, err[-3000:]
    reports = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    reads = [e for e in log if e[0] == "read"]
    posts = [e for e in log if e[0] == "action"]
    worst_read = max(e[4] for e in reads)
    worst_action = max((e[4] for e in posts), default=0.0)
    done = [a for a in actions if a[3] == 303]
    refused = [a for a in actions if a[3] == 409]
    kinds = sorted({k for r in reports for k in r["kinds"]})
    print(f"\n{elapsed:.0f} s: {len(reports)} rounds ({sum(len(r['made']) for r in reports)} changes: "
          f"{', '.join(kinds)}; "
          f"longest {max(r['seconds'] for r in reports):.1f} s); {len(reads)} reads, worst {worst_read:.2f} s; "
          f"{len(posts)} actions ({len(done)} done, {len(refused)} refused as stale), worst {worst_action:.2f} s")

    assert reports and out.rstrip().endswith("done")
    assert len(reads) > 100 and len(done) >= 5 and refused, (len(reads), len(done), len(refused))
    errors = [e for e in log if e[3] >= 500]
    assert not errors, errors[:5]
    assert {e[3] for e in reads} == {200}, sorted({(e[2], e[3]) for e in reads if e[3] != 200})[:5]
    unexpected = [a for a in actions if a[3] not in (303, 409)]
    assert not unexpected, unexpected[:3]
    assert worst_read <= READ_BOUND_S and worst_action <= ACTION_BOUND_S, (worst_read, worst_action)

    with SkillBank.open(path, embedder="hash") as after:
        report = after.verify()
        assert report.ok, report.problems  # the hash chain and every version row
        versions = {}
        for row in after.store.query("SELECT skill_id, version, author, reason FROM skill_versions"):
            versions.setdefault(row["skill_id"], []).append(row)
        for sid, rows in versions.items():  # no gap, no repeat
            assert sorted(r["version"] for r in rows) == list(range(1, len(rows) + 1)), sid
            assert after.get_skill(sid).version == len(rows), sid
        by_tag = {}
        for rows in versions.values():
            for r in rows:
                for tag in re.findall(r"load-\d+-\d+\b", r["reason"]):
                    by_tag.setdefault(tag, []).append(r)
        for tag, sid, verb, status, text in actions:
            written = by_tag.get(tag, [])
            if status == 303:  # done: exactly one version, by web
                assert len(written) == 1 and written[0]["author"] == "web", (tag, sid, verb, written)
            else:  # refused: nothing written, and the refusal says why
                assert written == [], (tag, sid, verb, written)
                assert "changed since" in text or "not a candidate" in text, text
        for r in reports:  # nothing a round made was lost
            for sid in r["made"]:
                assert sid in versions, (r["round"], sid)
        assert after.get_skill(probe).version == probe_version  # the refused requests wrote nothing

    # ... and `skillbank skills history` shows a web decision like any other version
    from typer.testing import CliRunner

    from skillbank.cli import app

    tag, sid = done[0][0], done[0][1]
    target = by_tag[tag][0]["skill_id"]
    result = CliRunner().invoke(app, ["skills", "history", target, "--json", "--dir", str(path)])
    assert result.exit_code == 0, result.output
    assert any(tag in v["reason"] and v["author"] == "web" for v in json.loads(result.output)), sid

    assert [(what, status) for what, status, _ in refusals] == [(what, want) for what, _, want in refusals]


GATE_CHILD = r"""
import sys
sys.path.insert(0, sys.argv[2])
from skillbank import SkillBank
from skillbank.evolution import evolve
from test_hardening_support import family_runs

bank = SkillBank.open(sys.argv[1], embedder="hash")
for run in family_runs(7):
    bank.trajectories.save(run)

def validate(skill, tasks):
    print("validating", skill.id, flush=True)
    sys.stdin.readline()  # until the parent has rejected the candidate in the page
    return True

report = evolve(bank, validate=validate, auto_promote=True, lock_timeout=30)
print("gate", [(d.skill_id, d.decision.value, d.detail) for d in report.gate], flush=True)
"""


def test_gate_deciding_a_candidate_a_person_just_decided(tmp_path):
    path = tmp_path / "bank"
    bank = SkillBank.open(path, embedder="hash")
    tests_dir = str(Path(__file__).resolve().parents[1])
    with LiveServer(bank) as server:
        proc = subprocess.Popen([sys.executable, "-c", GATE_CHILD, str(path), tests_dir], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline()
            if not line.startswith("validating"):  # not the failure this test is about: no xfail
                raise RuntimeError(f"the round did not reach its gate: {line!r} {proc.stderr.read()[-2000:]}")
            sid = line.split()[1]
            c = Client(server.port, [], threading.Lock())
            _, page, _ = c.request("read", "GET", "/candidates")
            hidden = csrf_and_version(page, f"/candidates/{sid}/reject")
            status, _, _ = c.request("action", "POST", f"/candidates/{sid}/reject",
                                     form={**hidden, "reason": "not wanted"})
            if status != 303:
                raise RuntimeError(f"the page did not take the rejection: HTTP {status}")
            out, err = proc.communicate(input="\n", timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    history = bank.history(sid)
    kept = bank.gate_records.for_skill(sid)
    bank.close()
    if not ([v.author for v in history].count("web") == 1 and history[-1].status == SkillStatus.retired):
        raise RuntimeError(f"the person's rejection did not stand: {history}")
    # Found by the load test: the gate's promote raised InvalidSkillError and the round stopped.
    # Now the person's decision stands, the round finishes and says what the gate measured.
    assert proc.returncode == 0, err[-2000:]
    assert f"('{sid}', 'decided', 'a person rejected it first; the gate measured" in out, out
    assert [(r.decision.value, r.reason.startswith("a person rejected it first")) for r in kept] == [("decided", True)]
