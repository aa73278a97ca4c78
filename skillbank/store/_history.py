"""Verification of the change log and diffs between versions."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field

from skillbank.models import Skill, SkillVersion
from skillbank.store._base import Store
from skillbank.store._skills import event_hash, version_from_row


@dataclass
class VerifyReport:
    events: int = 0
    versions: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_history(store: Store) -> VerifyReport:
    """Recompute the hash chain and every version's content hash.

    The first broken chain link is reported (everything after it is unverifiable); version
    mismatches are all reported, since each is independent evidence of an edit.
    """
    report = VerifyReport()
    prev_hash = None
    expected_seq = 1
    logged: dict[tuple[str, int], str] = {}
    for event in store.query("SELECT * FROM events ORDER BY seq"):
        report.events += 1
        if event["seq"] != expected_seq:
            report.problems.append(f"event {expected_seq} is missing (next is {event['seq']})")
            break
        if event["prev_hash"] != prev_hash:
            report.problems.append(f"event {event['seq']}: prev_hash does not match event {event['seq'] - 1}")
            break
        if event_hash(event) != event["hash"]:
            report.problems.append(f"event {event['seq']}: contents do not match its hash (edited)")
            break
        prev_hash, expected_seq = event["hash"], expected_seq + 1
        if event["skill_id"] and event["version"]:
            logged[(event["skill_id"], event["version"])] = json.loads(event["payload"])["content_hash"]

    for row in store.query("SELECT * FROM skill_versions ORDER BY skill_id, version"):
        report.versions += 1
        version = version_from_row(row)
        where = f"skill {version.skill_id} v{version.version}"
        if version.content.hash() != version.content_hash:
            report.problems.append(f"{where}: content does not match its content hash (edited)")
        if logged.get((version.skill_id, version.version)) != version.content_hash:
            report.problems.append(f"{where}: not recorded in the change log with this hash")
    # Each skill's current row is derived from its latest version: skillbank.store._cache_check
    # compares them (and reindex rebuilds the row).
    return report


def diff_versions(a: SkillVersion | Skill, b: SkillVersion | Skill, context: int = 3) -> str:
    """A unified diff of two versions, front matter fields first, then the body; a skill stands
    for its latest version."""

    def lines(v: SkillVersion | Skill) -> list[str]:
        c = v.content
        head = [
            f"name: {c.name}",
            f"description: {c.description}",
            f"kind: {c.kind.value}",
            f"tools: {', '.join(c.tools)}",
            f"tags: {', '.join(c.tags)}",
            f"status: {v.status.value}",
            f"pinned: {v.pinned}",
            "",
        ]
        return head + c.body.splitlines()

    return "\n".join(
        difflib.unified_diff(
            lines(a), lines(b),
            fromfile=f"{a.content.name} v{a.version}", tofile=f"{b.content.name} v{b.version}",
            lineterm="", n=context,
        )
    )
