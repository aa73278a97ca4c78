"""Explicit keywords over a whole config: the one rule every constructor that takes both uses.

    SkillBankMiddleware(bank, k=5)                            # a keyword: set on a default config
    SkillBankMiddleware(bank, injection=InjectionConfig(k=5)) # the whole config
    SkillBankMiddleware(bank, k=5, injection=...)             # TypeError: give k one way

The adapters (``skillbank.adapters``), ``measure`` (``skillbank.consistency``) and ``evolve``
(``skillbank.evolution``) apply their keywords with :func:`with_options`.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, TypeVar

__all__ = ["with_options"]

Config = TypeVar("Config")


def with_options(config: Config | None, kind: Callable[..., Config], *, owner: str, argument: str,
                 options: Mapping[str, Any]) -> Config:
    """The config a callable runs with: ``config`` as given, or ``kind`` built from the explicit
    keyword ``options`` the caller set (those not ``None``; the rest keep their defaults).

    Args:
        config: The whole config the caller passed as ``argument`` (``None``: not given).
        kind: The config class (a frozen dataclass), built when ``config`` is ``None``.
        owner: The callable's name, for the error.
        argument: The name of the callable's parameter that takes the whole config.
        options: The callable's explicit keywords for fields of ``kind``, by field name.

    Returns:
        ``config`` unchanged, or a new ``kind`` with the options set.

    Raises:
        TypeError: an option was given both as a keyword and through ``config``: each option
            is given one way, so which value applies is never a rule to remember.
    """
    given = {name: value for name, value in options.items() if value is not None}
    if config is None:
        return kind(**given)
    if given:
        names = ", ".join(f"{name}=" for name in given)
        example = ", ".join(f"{name}=..." for name in given)
        raise TypeError(f"{owner} got {names} and {argument}=: give each option one way, here on "
                        f"the config ({argument}={getattr(kind, '__name__', 'Config')}(..., {example}))")
    return config
