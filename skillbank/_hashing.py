"""Canonical JSON and content hashes (``sha256:<hex>``), shared by versions and the change log."""

from __future__ import annotations

import hashlib
import json
from typing import Any

ALGORITHM = "sha256"


def canonical_json(obj: Any) -> str:
    """Serialise with sorted keys and no insignificant white space, so equal data hashes equal."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def content_hash(obj: Any) -> str:
    """The algorithm-prefixed digest of ``obj``'s canonical JSON."""
    digest = hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()
    return f"{ALGORITHM}:{digest}"
