"""Which detector runs behind the injection patterns: ``SKILLBANK_INJECTION_DETECTOR``.

- ``off`` (the default): the patterns alone;
- ``on`` or ``embedding``: the MiniLM-embedding detector (:mod:`skillbank.screen.detector`);
- ``llm``: the classifier prompt on a chat model (:mod:`skillbank.screen.llm_detector`), the
  local 1.5B unless ``SKILLBANK_INJECTION_MODEL`` names another (``local:0.5b``, a GGUF path, or
  any ``provider:model``); it needs ``skillbank[local]`` and ``skillbank model fetch``;
- ``both``: a version is flagged when either flags it (the embedding detector is asked first:
  it costs milliseconds, the LLM seconds, and the LLM is not asked about what it already flagged).

Every way in asks :func:`active_detector` (through
:func:`skillbank.screen.patterns.detector_findings`); each detector is built once per process
and shared. One that cannot be built is left out, and the log says once what is still active,
and why, with what to install.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Callable, Protocol

from skillbank.screen.findings import Finding

__all__ = ["ENV", "MODEL_ENV", "MODES", "Detector", "Either", "configured_mode", "active_detector",
           "unavailable"]

log = logging.getLogger(__name__)

ENV = "SKILLBANK_INJECTION_DETECTOR"
MODEL_ENV = "SKILLBANK_INJECTION_MODEL"
MODES = ("off", "embedding", "llm", "both")
_SPELLINGS = {**dict.fromkeys(("0", "off", "false", "no"), "off"),
              **dict.fromkeys(("1", "on", "true", "yes", "embedding"), "embedding"),
              "llm": "llm", "both": "both"}
_KINDS = {"off": (), "embedding": ("embedding",), "llm": ("llm",), "both": ("embedding", "llm")}


class Detector(Protocol):
    """A layer behind the patterns: its findings on a version's added text."""

    name: str

    def findings(self, text: str) -> list[Finding]: ...


class Either:
    """Flags what any of ``detectors`` flags; asks them in order and stops at the first that does."""

    def __init__(self, *detectors: Detector):
        self.detectors = detectors
        self.name = " and the ".join(d.name for d in detectors)

    def findings(self, text: str) -> list[Finding]:
        for detector in self.detectors:
            found = detector.findings(text)
            if found:
                return found
        return []


def _embedding() -> Detector:
    from skillbank.screen.detector import InjectionDetector

    return InjectionDetector()


def _llm() -> Detector:
    from skillbank.screen.llm_detector import DEFAULT_MODEL, LLMDetector

    return LLMDetector.from_spec(os.environ.get(MODEL_ENV, "").strip() or DEFAULT_MODEL)


_BUILDERS: dict[str, Callable[[], Detector]] = {"embedding": _embedding, "llm": _llm}
_LABELS = {"embedding": "the embedding detector", "llm": "the LLM detector"}
_LOCK = threading.Lock()
_LOADED: dict[str, Detector] = {}
_UNAVAILABLE: dict[str, str] = {}
_SAID: set[str] = set()


def _say_once(level: int, message: str) -> None:
    with _LOCK:
        if message in _SAID:
            return
        _SAID.add(message)
    log.log(level, "injection screen: %s", message)


def configured_mode(default: str = "off") -> str:
    """The mode ``SKILLBANK_INJECTION_DETECTOR`` names, or ``default`` when it is not set; a value
    it does not know is said once and means the patterns alone."""
    raw = os.environ.get(ENV)
    if raw is None or not raw.strip():
        return default
    mode = _SPELLINGS.get(raw.strip().lower())
    if mode is None:
        _say_once(logging.WARNING, f"{ENV}={raw!r} is not one of off, on (embedding), llm, both: only the "
                                   "pattern layer is active")
        return "off"
    return mode


def _shared(kind: str) -> Detector | None:
    if kind in _LOADED or kind in _UNAVAILABLE:
        return _LOADED.get(kind)
    with _LOCK:
        if kind not in _LOADED and kind not in _UNAVAILABLE:
            try:
                _LOADED[kind] = _BUILDERS[kind]()
            except Exception as exc:  # noqa: BLE001 - no extra, no model or weights file: run without it
                _UNAVAILABLE[kind] = " ".join(f"{type(exc).__name__}: {exc}".split())
    return _LOADED.get(kind)


def unavailable(mode: str) -> dict[str, str]:
    """Why each detector ``mode`` asks for cannot run (after :func:`active_detector` tried), by label."""
    return {_LABELS[kind]: _UNAVAILABLE[kind] for kind in _KINDS[mode] if kind in _UNAVAILABLE}


def active_detector(mode: str | None = None) -> Detector | None:
    """The shared detector for ``mode`` (default: :func:`configured_mode`): a :class:`Detector`,
    or None when the mode is off or none of its detectors can run (said once, in the log)."""
    mode = configured_mode() if mode is None else mode
    if mode not in _KINDS:
        raise ValueError(f"unknown injection detector {mode!r}: use one of {', '.join(MODES)}")
    if mode == "off":
        _say_once(logging.INFO, f"only the pattern layer is active ({ENV}=embedding, llm or both adds a "
                                "detector behind it)")
        return None
    running = [d for kind in _KINDS[mode] if (d := _shared(kind)) is not None]
    missing = unavailable(mode)
    if missing:
        active = " and ".join(["the pattern layer", *(f"the {d.name}" for d in running)])
        _say_once(logging.WARNING, "; ".join(f"{label} cannot run ({why})" for label, why in missing.items())
                  + f": only {active} {'is' if not running else 'are'} active")
    if not running:
        return None
    return running[0] if len(running) == 1 else Either(*running)
