"""What a screen says about a text: its findings, each with a rule and a severity, and the result
they add up to. Every layer of the screen (the patterns, the embedding and LLM detectors) and the
evolution round's lint speak in these."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["REJECT", "QUARANTINE", "Finding", "LintResult"]

REJECT = "reject"
QUARANTINE = "quarantine"


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}"


@dataclass
class LintResult:
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def rejected(self) -> bool:
        return any(f.severity == REJECT for f in self.findings)

    @property
    def quarantined(self) -> bool:
        return not self.rejected and any(f.severity == QUARANTINE for f in self.findings)

    @property
    def reason(self) -> str:
        return "; ".join(str(f) for f in self.findings)
