"""Task templates and the request patterns read from them: text helpers of the evolution round.

Tasks that differ only in their values (an order number, a city, a person) share a template;
templates are what the round clusters and what descriptions are written from.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Sequence

_URL = re.compile(r"https?://\S+|www\.\S+")
# An e-mail address and a UUID: templated away here, refused in a skill by the linter.
EMAIL_PATTERN = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b")
UUID_PATTERN = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
# A single quote opens and closes only outside a word: an apostrophe ("I'd like a late check-out
# at one o'clock") is no quote, so one request's wordings fall into one template.
_QUOTED = re.compile(r"\"[^\"\n]{1,80}\"|(?<!\w)'[^'\n]{1,80}'(?!\w)|“[^”\n]{1,80}”")
_NUMBER = re.compile(r"(?<![\w<])[-+]?\$?\d[\d,.:/-]*\b")
_MIXED = re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{2,}\b")
_PROPER = re.compile(r"(?<=[a-z0-9,;>] )[A-Z][a-zA-Z]+(?: [A-Z][a-zA-Z]+)*")
_WORD = re.compile(r"<[a-z]+>|[a-z][a-z'-]*")

STOPWORDS = frozenset("""
a an the and or but if then else of for to in on at by with from into onto about as is are was
were be been being it its this that these those my your our their his her me you we they i he
she them us please can could would should will shall may might must do does did done have has
had not no so than too very just also up out over under again there here what which who whom
whose when where why how all any each some such own same other more most both few nor only
hi hello hey thanks thank kindly quickly asap need want like would just now also
""".split())


def task_template(task: str, instance_values: Sequence[str] = ()) -> str:
    """``"Refund order 1234 for Alice"`` -> ``"refund order <num> for <name>"``.

    ``instance_values`` (argument values the run's tool calls took from the task, see
    ``methods.instance_values``) become ``<value>`` first: "please refund ann's last order" and
    "please refund bob's last order" are one template.
    """
    text = _URL.sub(" <url> ", task)
    text = EMAIL_PATTERN.sub(" <email> ", text)
    text = UUID_PATTERN.sub(" <id> ", text)
    text = _QUOTED.sub(" <text> ", text)
    text = _MIXED.sub(" <id> ", text)
    text = _NUMBER.sub(" <num> ", text)
    text = _PROPER.sub("<name>", text)
    text = " ".join(text.lower().split())
    # Instance values last: the rules above already template most of them the same way whether
    # or not a run's calls happened to pass them on.
    for value in instance_values:
        text = re.sub(rf"(?<![\w<]){re.escape(value.lower())}(?![\w>])", "<value>", text)
    return re.sub(r"\s+([,.;:!?'’])", r"\1", text)

def request_kind(task: str | None, task_type: str | None) -> str | None:
    """A run's kind of request, as the live effect reads it per kind: its recorded task type when
    there is one, else its task's template (``None``: neither). What ``skillbank monitor``, the
    review page and ``skillbank skills show`` all pass as ``kind_of``."""
    return task_type or (task_template(task) if task else None)



def template_words(template: str) -> list[str]:
    """Content words of a template (placeholders and stop words dropped), in order."""
    return [w for w in _WORD.findall(template) if not w.startswith("<") and w not in STOPWORDS]


def common_pattern(templates: Sequence[str], share: float = 0.6) -> str:
    """The most frequent template with every word not shared by ``share`` of them elided; empty
    when that keeps under half of its content words."""
    if not templates:
        return ""
    counts: dict[str, int] = defaultdict(int)
    for t in templates:
        for w in set(_WORD.findall(t)):
            counts[w] += 1
    need = max(1, int(share * len(templates) + 0.999))
    # The first of the most frequent (then shortest) in the order given: a set's order would
    # change with PYTHONHASHSEED, and the pattern with it.
    base = max(dict.fromkeys(templates), key=lambda t: (templates.count(t), -len(t)))
    out: list[str] = []
    for token in base.split():
        words = _WORD.findall(token)
        keep = all(counts[w] >= need for w in words)  # punctuation alone is kept
        if keep:
            out.append(token)
        elif not out or out[-1] != "…":
            out.append("…")
    pattern = " ".join(out).strip()
    # A pattern that keeps under half the content words of the requests it stands for is stop
    # words and ellipses ("… and is … to …? you … first"): it says nothing (issue 31's trace).
    if 2 * len(template_words(pattern)) < len(template_words(base)):
        return ""
    return pattern


_FILLER = frozenset({"the", "a", "an", "and", "or", "my", "your", "this", "that"})


def describable(pattern: str) -> str:
    """A template pattern fit for a description a model reads: placeholders read as an
    ellipsis, and a pattern that is mostly elisions is no pattern.

    An elision says what it stands for when a word of its own frames it ("schedule … with … on
    … at …": what, with whom, which day, what time); after an article, a conjunction or a
    frame word already used it says nothing ("switch off the … the … and … the …"). A pattern
    needs a content word, and no more such empty elisions than content words and framed ones.
    """
    text = re.sub(r"<[a-z_]+>", "…", pattern)
    text = re.sub(r"…(?:\s*…)+", "…", text).strip()
    content = len(template_words(text))
    tokens = re.findall(r"…|[^\s…]+", text)
    framed, empty, frames = 0, 0, set()
    for i, token in enumerate(tokens):
        if token != "…":
            continue
        before = tokens[i - 1].lower().strip(",.;:!?") if i else ""
        if before and before not in _FILLER and before not in frames:
            framed += 1
            frames.add(before)
        else:
            empty += 1
    return text if content and empty <= framed + content else ""


def common_words(templates: Sequence[str], share: float = 0.6, limit: int = 4) -> list[str]:
    """Content words present in at least ``share`` of the templates, in order of first use."""
    if not templates:
        return []
    need = max(1, int(share * len(templates) + 0.999))
    counts: dict[str, int] = defaultdict(int)
    for t in templates:
        for w in set(template_words(t)):
            counts[w] += 1
    base = max(dict.fromkeys(templates), key=lambda t: templates.count(t))  # first of the most frequent
    ordered = list(dict.fromkeys(w for w in template_words(base) if counts[w] >= need))
    return ordered[:limit]
