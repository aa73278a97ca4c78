"""Clustering the uncovered pile by task similarity, cheaply enough for 100,000 runs.

1. Runs whose tasks share a template (values replaced by placeholders, the request's own
   argument values included: see ``_methods.py``) are one group, and templates with the same
   content words ("please refund order <num>" and "refund order <num>") are one group; most
   workloads have far fewer of these than runs. Groups too small to learn from alone whose
   successes share a method of two or more steps are then one group too, however different
   their wording ("Put the key in the chest." and "Put the coin in the crate." both take, open,
   put), and so are groups whose successes called no tool and that cannot teach the no-tool
   lesson alone (small talk in its wordings: one wording's runs all succeeded, another's mostly
   failed with a call).
2. The ``max_embed`` most frequent groups are embedded (one representative each, in one batch)
   and joined greedily (leader clustering) at ``threshold`` cosine similarity.
3. Templates beyond that cap are grouped by the tool signature of their successes, so a
   recurring method across otherwise unique tasks is still found.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from skillbank.evolution._evidence import Run, RunGroup
from skillbank.evolution._templates import template_words


@dataclass
class Cluster(RunGroup):
    key: str
    runs: list[Run]

    @property
    def suspects(self) -> list[Run]:
        return [r for r in self.runs if r.success and r.suspect]

    @property
    def templates(self) -> list[str]:
        return [r.template for r in self.runs]


def cluster_runs(runs: Sequence[Run], embedder: Any, *, threshold: float = 0.75,
                 max_embed: int = 4000, min_support: int = 2) -> list[Cluster]:
    by_template: dict[str, list[Run]] = defaultdict(list)
    representative: dict[str, str] = {}  # template -> the first template with its content words
    first_with: dict[frozenset[str], str] = {}
    for run in runs:
        rep = representative.get(run.template)
        if rep is None:
            key = frozenset(template_words(run.template))
            # Same content words, same task: one template stands for all of them.
            rep = representative[run.template] = first_with.setdefault(key, run.template) if key else run.template
        by_template[rep].append(run)
    by_template = _join_by_method(by_template, min_support)
    ordered = sorted(by_template, key=lambda t: (-len(by_template[t]), t))
    head, tail = ordered[:max_embed], ordered[max_embed:]
    clusters: list[Cluster] = []
    if head:
        members = _leader_clusters(head, embedder, threshold)
        for lead, templates in members.items():
            group = [r for t in templates for r in by_template[t]]
            clusters.append(Cluster(key="task:" + head[lead], runs=group))
    if tail:
        by_signature: dict[tuple[str, ...], list[Run]] = defaultdict(list)
        for template in tail:
            template_runs = by_template[template]
            ok = [r.sequence for r in template_runs if r.success]
            signature = Counter(ok).most_common(1)[0][0] if ok else ()
            by_signature[signature].extend(template_runs)
        for signature, group in by_signature.items():
            if signature:
                clusters.append(Cluster(key="tools:" + ">".join(signature), runs=group))
    return clusters


# The method of a success that called no tool. Small talk comes in many wordings ("Hi, lovely
# to be here!", "Good evening! How are you doing?"), each seen too rarely to teach alone; what
# they share is that the successes called nothing (the no-tool lesson's support, rule.py).
_NO_CALL = (("<no call>", ()),)


def _join_by_method(by_template: dict[str, list[Run]], min_support: int) -> dict[str, list[Run]]:
    """Template groups too small to learn from alone (fewer than ``min_support`` successes)
    whose successes mostly follow one method of two steps or more, or mostly called no tool,
    joined by that method.

    A group that can teach on its own stays alone: joining it with other requests that happen
    to use the same tools would mix their failures (a missing tool, an ambiguous value) into
    its contrast and blur the lesson its own failures hold. What small talk teaches is the
    no-tool lesson, which needs failures that called a tool as well as successes (rule.py), so
    a no-call group teaches alone only with both (two wordings of thanks, one that always
    succeeded without a call and one that failed calling a tool, teach together).
    """
    joined: dict[str, list[Run]] = {}
    first_with: dict[tuple, str] = {}
    for template, runs in by_template.items():
        successes = [r for r in runs if r.success]
        methods = Counter(_NO_CALL if not r.calls else r.method for r in successes
                          if not r.calls or len(r.method) >= 2)
        method, n = methods.most_common(1)[0] if methods else ((), 0)
        callers = sum(1 for r in runs if not r.success and r.calls)
        teaches_alone = len(successes) >= min_support and (method != _NO_CALL or callers >= min_support)
        if teaches_alone or n * 2 <= len(successes):
            joined[template] = list(runs)
            continue
        lead = first_with.setdefault(method, template)
        joined.setdefault(lead, []).extend(runs)
    return joined


def _leader_clusters(templates: list[str], embedder: Any, threshold: float) -> dict[int, list[str]]:
    """Greedy leader clustering, most frequent template first; one matrix product for all."""
    if len(templates) == 1:
        return {0: [templates[0]]}
    vectors = np.asarray(embedder.embed(templates), dtype=np.float32)
    sims = vectors @ vectors.T
    leaders: list[int] = []
    members: dict[int, list[str]] = {}
    for i, template in enumerate(templates):
        if leaders:
            row = sims[i, leaders]
            best = int(np.argmax(row))
            if row[best] >= threshold:
                members[leaders[best]].append(template)
                continue
        leaders.append(i)
        members[i] = [template]
    return members
