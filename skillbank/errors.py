"""Exceptions raised by skillbank.

Every error a user can cause has its own class so that callers can catch it precisely; the
message always says what is wrong and what to do about it. The CLI prints the message on one
line and exits non-zero instead of showing a traceback.
"""

from __future__ import annotations

__all__ = [
    "SkillBankError",
    "NotABankError",
    "CorruptBankError",
    "SchemaTooNewError",
    "SchemaTooOldError",
    "SkillNotFoundError",
    "TrajectoryNotFoundError",
    "VersionNotFoundError",
    "InvalidSkillError",
    "DuplicateSkillError",
    "SkillFileError",
    "EmbedderError",
    "LockedError",
    "StorageFullError",
    "MissingExtraError",
    "BankUnavailableError",
    "DamagedIndexError",
    "AlreadyMeasuredError",
    "MeasureError",
    "ModelSpecError",
    "MissingProviderError",
    "CliError",
    "LocalModelError",
    "ContextWindowExceededError",
    "ModelFetchError",
    "TemplateError",
]


class SkillBankError(Exception):
    """Base class of every error skillbank raises on purpose."""


class NotABankError(SkillBankError):
    """The folder exists but does not hold a skill bank."""


class CorruptBankError(SkillBankError):
    """The bank's database cannot be read (truncated, overwritten, not SQLite)."""


class SchemaTooOldError(SkillBankError):
    """A read-only open met a bank that needs a migration, which only a write may apply."""


class SchemaTooNewError(SkillBankError):
    """The database was written by a newer skillbank than the one installed."""


class SkillNotFoundError(SkillBankError, KeyError):
    """No skill has the given id or name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "skill not found"


class TrajectoryNotFoundError(SkillBankError, KeyError):
    """No trajectory has the given id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "trajectory not found"


class VersionNotFoundError(SkillBankError, ValueError):
    """The skill exists but has no such version number."""


class InvalidSkillError(SkillBankError, ValueError):
    """A skill field breaks a rule (name format, empty body, size caps, ...)."""


class DuplicateSkillError(SkillBankError, ValueError):
    """A skill with that name already exists."""


class SkillFileError(SkillBankError, ValueError):
    """One or more SKILL.md files are invalid; ``problems`` maps each path to its reasons.

    Args:
        message: The error's message.
        problems: Each invalid file's path and the reasons it is invalid; ``None``: none listed.
    """

    def __init__(self, message: str, problems: dict[str, list[str]] | None = None):
        super().__init__(message)
        self.problems = problems or {}


class EmbedderError(SkillBankError, ValueError):
    """The embedder could not be resolved or returned vectors of the wrong shape."""


class LockedError(SkillBankError):
    """Another process holds an exclusive lock (for example a running evolution round)."""


class StorageFullError(SkillBankError, OSError):
    """The disk (or the database's size cap) is full; the interrupted change was rolled back."""


class MissingExtraError(SkillBankError, ImportError):
    """An optional integration was used without its extra installed."""

    def __init__(self, feature: str, extra: str, package: str):
        super().__init__(
            f"{feature} needs the optional package {package!r}: "
            f"pip install 'skillbank[{extra}]'"
        )


class BankUnavailableError(SkillBankError):
    """The bank's database server cannot be reached (or refused the connection)."""


class DamagedIndexError(SkillBankError):
    """The search index's files are unreadable; ``skillbank reindex`` rebuilds them from the bank."""

    def __init__(self, where: str, reason: str):
        super().__init__(f"the search index at {where} is damaged ({reason}); "
                         "`skillbank reindex` rebuilds it from the bank")
        self.where, self.reason = where, reason


class AlreadyMeasuredError(SkillBankError):
    """The bank already holds the runs of an earlier measurement that a new one would mix with."""


class MeasureError(SkillBankError):
    """A measurement cannot run as asked (bad tasks, arms or a trial that broke the rules)."""


class ModelSpecError(SkillBankError, ValueError):
    """A model spec names no usable model."""


class MissingProviderError(MissingExtraError):
    """A ``provider:model`` spec whose LangChain integration package is not installed."""

    def __init__(self, spec: str, package: str):
        SkillBankError.__init__(self, f"the chat model {spec!r} needs the package {package!r}: "
                                      f"pip install {package}")


class CliError(SkillBankError):
    """A usage problem detected by the command line itself (printed like any bank error)."""


class LocalModelError(SkillBankError):
    """A local model file is missing or unusable."""


class ContextWindowExceededError(LocalModelError, ValueError):
    """The rendered prompt does not fit the model's context (``n_ctx``)."""


class ModelFetchError(SkillBankError):
    """A model could not be downloaded, assembled or verified."""


class TemplateError(ValueError):
    """The chat template could not be rendered (it raised, or is not valid jinja2).

    Not a :class:`SkillBankError`: it surfaces as the ``ValueError`` a chat template's caller
    expects."""
