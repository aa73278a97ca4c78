"""skillbank serve on a PostgreSQL bank (a real server from tests/postgres_support.py), in
Debian's chromium: list, a skill's diff, promote, and the change read back through the API."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import unavailable

try:
    from playwright.sync_api import sync_playwright

    import skillbank._web  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the install
    unavailable(f"{exc}: pip install 'skillbank[web,dev]'", allow_module_level=True)

from serve_support import CHROMIUM, CHROMIUM_ARGS, TOKEN, LiveServer, fill
from skillbank import SkillBank
from skillbank.models import SkillStatus


@pytest.fixture
def pg_bank(pg_url):
    b = SkillBank.open(pg_url, embedder="hash")
    yield b
    b.close()


def test_review_on_postgres_in_chromium(pg_bank):
    if not Path(CHROMIUM).exists():
        unavailable(f"no {CHROMIUM}: apt-get install chromium")
    ids = fill(pg_bank)
    with LiveServer(pg_bank) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.set_default_timeout(10_000)
            dialogs = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(f"{server.url}/?token={TOKEN}")
            assert page.locator("#skills tbody tr").count() == 4
            page.goto(f"{server.url}/skills/{ids['plain']}?a=1&b=2")
            assert "+Call get_order with the order id." in page.inner_text("#diff")
            page.goto(f"{server.url}/candidates")
            card = page.locator(f"#cand-{ids['cand']}")
            card.locator("input[aria-label='promote reason']").fill("works on postgres")
            card.locator("input[name=confirm][value=unmeasured]").check()  # the gate never measured it
            card.locator("text=Promote").click()
            assert dialogs == []
        finally:
            browser.close()
    promoted = pg_bank.history(ids["cand"])[-1]
    assert (promoted.status, promoted.author) == (SkillStatus.active, "web")
