"""De-duplication: a new skill too similar to an existing one becomes a merge into it.

Two measures, either of which is enough (same kind required):

- semantic: cosine similarity of the embedded ``name + description + tools`` (what retrieval
  embeds) at least ``dedupe_threshold`` (0.88 by default: just under the 0.92 at which
  retrieval already refuses to inject both);
- structural: Jaccard similarity of the lessons and tool names at least
  ``structural_threshold`` (0.8), when both skills hold structured lessons (free guidance is
  compared by the embeddings above).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from skillbank.evolution._seam import EvolutionBank
from skillbank.lessons import LessonKind
from skillbank.models import Skill, SkillContent


def _structured(content: SkillContent) -> list[str]:
    """The structured lessons as comparable features; a procedure by its tool order, so two
    skills with one method compare equal whatever their argument shapes."""
    out = []
    for lesson in content.lessons:
        if lesson.kind == LessonKind.procedure:
            out.append("procedure:" + ">".join(dict.fromkeys(step.tool for step in lesson.steps)))
        elif lesson.kind != LessonKind.guidance:
            out.append(lesson.key)
    return out


def methods_conflict(a: SkillContent, b: SkillContent) -> bool:
    """Two skills that each teach a method, and not the same one: never duplicates, however
    alike their descriptions read (the methods of one agent's different requests often do).

    The same tools in the same order are one method; so are steps where only one side says
    what the arguments look like.
    """
    def method(content: SkillContent) -> tuple | None:
        lesson = next((x for x in content.lessons if x.kind == LessonKind.procedure), None)
        return lesson.steps if lesson is not None else None

    ma, mb = method(a), method(b)
    if ma is None or mb is None:
        return False
    if [s.tool for s in ma] != [s.tool for s in mb]:
        return True
    return any(x.args and y.args and x.args != y.args for x, y in zip(ma, mb))


def features(content: SkillContent) -> set[str]:
    return set(_structured(content)) | {f"tool:{t}" for t in content.tools}


def structural_similarity(a: SkillContent, b: SkillContent) -> float:
    if not (_structured(a) and _structured(b)):
        return 0.0
    fa, fb = features(a), features(b)
    return len(fa & fb) / len(fa | fb) if fa | fb else 0.0


@dataclass
class Match:
    ref: str  # a skill id, or "new:<name>" for a skill proposed earlier in this round
    content: SkillContent
    score: float
    how: str  # "semantic" | "structural" | "name"


class Deduper:
    def __init__(self, bank: EvolutionBank, pool: Iterable[Skill], *, threshold: float = 0.88,
                 structural_threshold: float = 0.8):
        self.bank = bank
        self.threshold = threshold
        self.structural_threshold = structural_threshold
        self.refs: list[str] = []
        self.contents: list[SkillContent] = []
        self._cache: dict[str, np.ndarray] = {}
        pool = list(pool)
        self._vectors = np.zeros((0, 0), dtype=np.float32)
        if pool:
            self._add([s.id for s in pool], [s.content for s in pool])

    def _embed(self, contents: list[SkillContent]) -> np.ndarray:
        """Embeddings from this round's cache, then the bank's cache by content hash; the rest
        embedded in one batch."""
        embedder = self.bank.embedder
        hashes = [c.hash() for c in contents]
        self._cache.update(self.bank.embeddings.get(embedder.name, (h for h in hashes if h not in self._cache)))
        missing = {h: c for h, c in zip(hashes, contents) if h not in self._cache}
        if missing:
            fresh = embedder.embed([c.embedding_text() for c in missing.values()])
            for h, vec in zip(missing, fresh):
                self._cache[h] = np.asarray(vec, dtype=np.float32)
        if not hashes:
            return np.zeros((0, 0), np.float32)
        return np.vstack([self._cache[h] for h in hashes])

    def prime(self, contents: Iterable[SkillContent | None]) -> None:
        """Embed ``contents`` (``None`` ones skipped) in one batch now, so later matches cost no
        model call."""
        present = [c for c in contents if c is not None]
        if present:
            self._embed(present)

    def _add(self, refs: list[str], contents: list[SkillContent]) -> None:
        vecs = self._embed(contents)
        self._vectors = vecs if self._vectors.size == 0 else np.vstack([self._vectors, vecs])
        self.refs.extend(refs)
        self.contents.extend(contents)

    def register(self, ref: str, content: SkillContent) -> None:
        self._add([ref], [content])

    def match(self, content: SkillContent, *, exclude: Iterable[str] = ()) -> Match | None:
        if not self.refs:
            return None
        excluded = set(exclude)
        vec = self._embed([content])[0]
        sims = self._vectors @ vec
        best: Match | None = None
        for i, (ref, other) in enumerate(zip(self.refs, self.contents)):
            if ref in excluded:
                continue
            if other.name == content.name:
                return Match(ref, other, 1.0, "name")
            if other.kind != content.kind or methods_conflict(content, other):
                continue
            score, how = float(sims[i]), "semantic"
            structural = structural_similarity(content, other)
            if structural >= self.structural_threshold and structural > score:
                score, how = structural, "structural"
            if (how == "semantic" and score >= self.threshold) or how == "structural":
                if best is None or score > best.score:
                    best = Match(ref, other, score, how)
        return best

    def duplicate_pairs(self, ids: set[str]) -> list[tuple[str, str, float, str]]:
        """Pairs among ``ids`` (existing skills) that are duplicates of each other."""
        out = []
        idx = [i for i, r in enumerate(self.refs) if r in ids]
        for n, i in enumerate(idx):
            for j in idx[n + 1:]:
                a, b = self.contents[i], self.contents[j]
                if a.kind != b.kind or methods_conflict(a, b):
                    continue
                score = float(self._vectors[i] @ self._vectors[j])
                structural = structural_similarity(a, b)
                if score >= self.threshold:
                    out.append((self.refs[i], self.refs[j], score, "semantic"))
                elif structural >= self.structural_threshold:
                    out.append((self.refs[i], self.refs[j], structural, "structural"))
        return out
