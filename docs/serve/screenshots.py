"""Regenerate the screenshots in this folder from a bank the demo left behind.

    skillbank demo -d /tmp/demo-bank          # about two minutes; once
    python docs/serve/screenshots.py /tmp/demo-bank

Serves the bank on a free loopback port (the same live server the browser tests
use), drives Debian's chromium through Playwright and writes skills.png, search.png, skill.png
(the skill with the most gate records), candidates.png, runs.png and report.png (the newest
stored measurement). Only pages are read (GET): the bank is not changed.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "tests"))

VIEWPORT = {"width": 1280, "height": 900}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    from playwright.sync_api import sync_playwright

    from serve_support import CHROMIUM, CHROMIUM_ARGS, TOKEN, LiveServer
    from skillbank import SkillBank

    with SkillBank.open(argv[0]) as bank:
        active = bank.list_skills(status="active")
        if not active:
            raise SystemExit(f"{argv[0]}: no active skill; run `skillbank demo -d {argv[0]}` first")
        measured = max(active, key=lambda s: (len(bank.gate_records.for_skill(s.id)), s.stats.uses))
        reports = bank.trajectories.labelled_runs()
        task = bank.trajectories.list(limit=1)[0].task if bank.trajectories.count() else "refund an order"
        with LiveServer(bank) as server, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_context(viewport=VIEWPORT).new_page()
            page.goto(f"{server.url}/?token={TOKEN}")
            shots = [("skills.png", "/skills"), ("skill.png", f"/skills/{measured.id}"),
                     ("candidates.png", "/candidates"), ("runs.png", "/runs?outcome=failure")]
            if reports:
                shots.append(("report.png", f"/reports/{reports[0].run}"))
            for name, path in shots:
                page.goto(server.url + path)
                page.wait_for_load_state("load")
                page.screenshot(path=str(HERE / name))
                print(f"wrote {HERE / name}")
            page.goto(f"{server.url}/skills")
            page.fill("input[name=q]", task[:200])
            page.click("form.filters button")
            page.screenshot(path=str(HERE / "search.png"))
            print(f"wrote {HERE / 'search.png'}")
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
