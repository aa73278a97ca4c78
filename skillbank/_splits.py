"""The split vocabulary: the names of the sets a measurement splits its tasks into, and which
splits are measured on only.

A measurement splits its tasks into an evolution set (``train``) and a held-out set
(``heldout``); a run's ``labels["split"]`` carries the name. Runs of a held-out split are what
a bank is measured on, so evolution never learns from them. The evaluation
(:mod:`skillbank.consistency._splits` assigns the splits), the round, the report and the command
line read these names here, in the core, because evolution (below the evaluation in the layers)
needs them too; the store only filters on the split names it is given.
"""

from __future__ import annotations

__all__ = ["ALL_SPLITS", "TRAIN", "HELD_OUT", "SPLITS", "HELD_OUT_SPLITS", "describe_split"]

ALL_SPLITS = "all"
"""The pseudo-split that pools every task."""
TRAIN = "train"
HELD_OUT = "heldout"
SPLITS = (TRAIN, HELD_OUT)
"""The two sets :func:`skillbank.consistency._splits.assign_splits` makes (and ``skillbank eval
--split`` takes)."""

# Split labels that mean "measured on, never learned from" (a run's ``labels["split"]``):
# the names other tools and older banks use as well as ours.
HELD_OUT_SPLITS = frozenset({"held_out", HELD_OUT, "held-out", "test", "eval"})

# split -> (its name in headings, its name in a narrow column)
_NAMES = {
    None: ("all tasks", "all"),
    ALL_SPLITS: ("all tasks", "all"),
    TRAIN: ("evolution set (train)", TRAIN),
    HELD_OUT: ("held-out set", "held-out"),
    "held_out": ("held-out set", "held-out"),
}


def describe_split(split: str | None, *, short: bool = False) -> str:
    """A split's name for people: ``"held-out set"`` (``short``: ``"held-out"``)."""
    names = _NAMES.get(split)
    return str(split) if names is None else names[1 if short else 0]
