"""Which detector runs behind the injection patterns: ``SKILLBANK_INJECTION_DETECTOR``.

- ``off`` (the default): the patterns alone;
- ``on`` or ``embedding``: the MiniLM-embedding detector (:mod:`skillbank._screen.detector`);
- ``llm``: the classifier prompt on a chat model (:mod:`skillbank._screen.llm_detector`), the
  local ``1.5b`` model unless ``SKILLBANK_INJECTION_MODEL`` names another (``local:0.5b``, a GGUF path, or
  any ``provider:model``); it needs ``skillbank[local]`` and ``skillbank model fetch``;
- ``both``: the embedding detector as a first stage before the LLM (:class:`Staged`): a version
  it scores as clearly clean passes and one it scores as clearly an injection is flagged, without
  a model call; the LLM judges the band between. The embedding detector costs milliseconds, the
  LLM seconds, and the clear cases are where the LLM adds least: its false alarms were on ordinary
  lines, and the embedding detector is sure of the loudest injections.

Every way in asks :func:`active_detector` (through
:func:`skillbank._screen.patterns.detector_findings`); each detector is built once per process
and shared. One that cannot be built is left out, and the log says once what is still active,
and why, with what to install.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING, Callable, Protocol, cast

from skillbank._screen.findings import Finding

if TYPE_CHECKING:
    from skillbank._screen.detector import InjectionDetector

__all__ = ["ENV", "MODEL_ENV", "MODES", "CLEAR_CLEAN", "CLEAR_INJECTION", "Detector", "Staged",
           "configured_mode", "active_detector", "unavailable"]

log = logging.getLogger(__name__)

ENV = "SKILLBANK_INJECTION_DETECTOR"
MODEL_ENV = "SKILLBANK_INJECTION_MODEL"
MODES = ("off", "embedding", "llm", "both")
_SPELLINGS = {**dict.fromkeys(("0", "off", "false", "no"), "off"),
              **dict.fromkeys(("1", "on", "true", "yes", "embedding"), "embedding"),
              "llm": "llm", "both": "both"}
_KINDS = {"off": (), "embedding": ("embedding",), "llm": ("llm",), "both": ("embedding", "llm")}

# The first stage's band, on the embedding detector's probability for a version's highest-scoring
# chunk: below CLEAR_CLEAN a version passes, at or above CLEAR_INJECTION it is flagged, without a
# model call; the LLM judges what lies between. Chosen on the training split by
# scripts/calibrate_injection_stages.py (docs/decisions/0006).
CLEAR_CLEAN = 0.228
CLEAR_INJECTION = 0.999


class Detector(Protocol):
    """A layer behind the patterns: its findings on a version's added text."""

    name: str

    def findings(self, text: str) -> list[Finding]: ...


class Staged:
    """The embedding detector as a first stage before the LLM: a text whose highest-scoring chunk
    is below ``clear_clean`` passes, one at or above ``clear_injection`` is flagged, and only the
    band between (or a text too short to score) costs a model call."""

    def __init__(self, embedding: InjectionDetector, llm: Detector, *, clear_clean: float = CLEAR_CLEAN,
                 clear_injection: float = CLEAR_INJECTION):
        self.embedding, self.llm = embedding, llm
        self.clear_clean, self.clear_injection = clear_clean, clear_injection
        self.name = f"{embedding.name} and the {llm.name}"

    def findings(self, text: str) -> list[Finding]:
        top = self.embedding.top(text)
        if top is None:
            return self.llm.findings(text)
        if top.probability >= self.clear_injection:
            from skillbank._screen.detector import flag  # numpy, loaded with the embedding detector

            return [flag(top)]
        if top.probability < self.clear_clean:
            return []
        return self.llm.findings(text)


def _embedding() -> Detector:
    from skillbank._screen.detector import InjectionDetector

    return InjectionDetector()


def _llm() -> Detector:
    from skillbank._screen.llm_detector import DEFAULT_MODEL, LLMDetector

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
    if len(running) == 1:
        return running[0]
    embedding, llm = running  # "both": the embedding detector first (_KINDS)
    return Staged(cast("InjectionDetector", embedding), llm)
