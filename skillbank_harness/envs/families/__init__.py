"""Environment families. Importing this package registers every family's templates.

``FAMILIES`` are the default set (the demo's, and ``generate_tasks()``'s); ``EXTRA_FAMILIES``
are opt-in and come only when named: ``simple`` and ``small``, tiers for small real models
(``small``: six lessons in four toolsets, calibrated by headroom against an oracle).
"""

from skillbank_harness.envs.families import calendar, car, retail, simple, small  # noqa: F401  (registration)
from skillbank_harness.envs.families.calendar import CalendarEnv
from skillbank_harness.envs.families.car import CarEnv
from skillbank_harness.envs.families.retail import RetailEnv
from skillbank_harness.envs.families.simple import SimpleEnv
from skillbank_harness.envs.families.small import SmallEnv

FAMILIES = {"car": CarEnv, "retail": RetailEnv, "calendar": CalendarEnv}
EXTRA_FAMILIES = {"simple": SimpleEnv, "small": SmallEnv}

__all__ = ["FAMILIES", "EXTRA_FAMILIES", "CarEnv", "RetailEnv", "CalendarEnv", "SimpleEnv", "SmallEnv"]
