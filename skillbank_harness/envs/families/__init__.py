"""Environment families. Importing this package registers every family's templates.

``FAMILIES`` are the default set (the demo's, and ``generate_tasks()``'s); ``EXTRA_FAMILIES``
are opt-in and come only when named: ``simple`` and ``small``, tiers for small real models
(``small``: six lessons in four toolsets, calibrated by headroom against an oracle;
``steady``: requests a small model sometimes gets right, for consistency), and the six
``sealed_*`` toolsets of the sealed tier (``benchmarks/sealed/``).
"""

from skillbank_harness.envs.families import calendar, car, retail, simple, small, steady  # noqa: F401  (registration)
from skillbank_harness.envs.families import steady_more  # noqa: F401,E402  (registration, after steady)
from skillbank_harness.envs.families import sealed  # noqa: F401,E402  (registration)
from skillbank_harness.envs.families.calendar import CalendarEnv
from skillbank_harness.envs.families.car import CarEnv
from skillbank_harness.envs.families.retail import RetailEnv
from skillbank_harness.envs.families.simple import SimpleEnv
from skillbank_harness.envs.families.small import SmallEnv
from skillbank_harness.envs.families.steady import SteadyEnv

FAMILIES = {"car": CarEnv, "retail": RetailEnv, "calendar": CalendarEnv}
EXTRA_FAMILIES = {"simple": SimpleEnv, "small": SmallEnv, "steady": SteadyEnv,
                  # The sealed tier (benchmarks/sealed/): written blind, run once per claim.
                  **{env.family: env for env in (sealed.GymEnv, sealed.LockerEnv, sealed.TimetableEnv,
                                                 sealed.BikeEnv, sealed.RecipeEnv, sealed.MeterEnv)}}

__all__ = ["FAMILIES", "EXTRA_FAMILIES", "CarEnv", "RetailEnv", "CalendarEnv", "SimpleEnv", "SmallEnv", "SteadyEnv"]
