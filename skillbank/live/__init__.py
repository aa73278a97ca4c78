"""Evidence from live traffic: randomized exposure of skills, its record, the live effect of each
skill with an anytime-valid confidence sequence, and the monitor that decides on it.

- :mod:`.config`: :class:`LiveConfig`, the exposures and the monitor's thresholds;
- :mod:`.exposure`: the per-run draw that shows or holds back an eligible skill;
- :mod:`.canary`: a skill into canary (the ``canary`` tag on an active skill) and out of it;
- :mod:`.recording`: a run's exposures kept with the bank its recording writes to;
- :mod:`.confseq`: the confidence sequence for a Bernoulli mean and a difference of two;
- :mod:`.effect`: each skill's success counts shown vs held back, overall and per kind;
- :mod:`.monitor`: promote, reject, retire, narrow or flag stale, as new versions.
"""

from skillbank.live._config import LiveConfig
from skillbank.live._exposure import Arm, Exposure, ExposureDraw, draw, is_canary

__all__ = ["Arm", "Exposure", "ExposureDraw", "LiveConfig", "draw", "is_canary"]
