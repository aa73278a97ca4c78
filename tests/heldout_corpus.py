"""Readers for the held-out hardening corpora in tests/data/heldout (issue 20; see its README) and
the fresh injection set in tests/data/heldout_injection_v3 (issue 32).

The files were written before the detectors they measure, and are never edited;
scripts/hardening_report.py measures every layer on them. Nothing may be trained on them, except
that tests/data/heldout became the calibration split of the LLM detector and of its first stage once
the v3 set was committed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

HELDOUT = Path(__file__).resolve().parent / "data" / "heldout"
HELDOUT_INJECTION_V3 = Path(__file__).resolve().parent / "data" / "heldout_injection_v3"


def _tsv(name: str, directory: Path = HELDOUT) -> list[tuple[str, str]]:
    rows = []
    for line in (directory / name).read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            label, text = line.split("\t", 1)
            rows.append((label, text))
    return rows


def injections() -> list[tuple[str, str]]:
    """(style, line) for every held-out injection line."""
    return _tsv("injection.tsv")


def clean_lines() -> list[tuple[str, str]]:
    """(source, line): person-written near-misses, then every line a demo bank learned."""
    return [("person:" + k, t) for k, t in _tsv("clean_person.tsv")] + \
        [("demo:" + k, t) for k, t in _tsv("clean_demo.tsv")]


def injections_v3() -> list[tuple[str, str]]:
    """(style, line) for every injection line of the fresh v3 set."""
    return _tsv("injection.tsv", HELDOUT_INJECTION_V3)


def clean_lines_v3() -> list[tuple[str, str]]:
    """(style, line) for every clean line of the fresh v3 set."""
    return _tsv("clean.tsv", HELDOUT_INJECTION_V3)


@dataclass(frozen=True)
class SecretCase:
    format: str
    context: str
    text: str
    secrets: tuple[str, ...]

    def redacted_exactly(self, out: str) -> bool:
        """Whether ``out`` is ``text`` with each secret, and nothing else, replaced by a placeholder."""
        pattern = re.escape(self.text)
        for secret in sorted(self.secrets, key=len, reverse=True):
            pattern = pattern.replace(re.escape(secret), r"\[REDACTED:[A-Za-z0-9_.-]+\]")
        return re.fullmatch(pattern, out) is not None

    def removed(self, out: str) -> bool:
        """Whether every secret is gone from ``out`` (whatever else went with it)."""
        return not any(s in out for s in self.secrets)


HELDOUT_V2 = Path(__file__).resolve().parent / "data" / "heldout_v2"
# The third set, written blind after the vendor rules of issue 32 (tests/data/heldout_secrets_v3).
HELDOUT_SECRETS_V3 = Path(__file__).resolve().parent / "data" / "heldout_secrets_v3"


def secrets(directory: Path = HELDOUT) -> list[SecretCase]:
    """The held-out secret cases; ``HELDOUT_V2`` for the second set (issue 32)."""
    out = []
    for line in (directory / "secrets.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out.append(SecretCase(row["format"], row["context"], row["text"], tuple(row["secrets"])))
    return out


def lookalikes(directory: Path = HELDOUT) -> list[tuple[str, str]]:
    """(kind, text) that must come out of the scrubber unchanged."""
    rows = [json.loads(line) for line in (directory / "lookalikes.jsonl").read_text(encoding="utf-8").splitlines()]
    return [(r["kind"], r["text"]) for r in rows]
