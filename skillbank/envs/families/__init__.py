"""Environment families. Importing this package registers every family's templates."""

from skillbank.envs.families import calendar, car, retail  # noqa: F401  (registration)
from skillbank.envs.families.calendar import CalendarEnv
from skillbank.envs.families.car import CarEnv
from skillbank.envs.families.retail import RetailEnv

FAMILIES = {"car": CarEnv, "retail": RetailEnv, "calendar": CalendarEnv}

__all__ = ["FAMILIES", "CarEnv", "RetailEnv", "CalendarEnv"]
