"""A small thread-safe least-recently-used map: the caches of parsed rows, embeddings and
verdicts that a process keeps in memory share it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, Hashable, TypeVar

__all__ = ["LRU"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most ``size`` entries; reading one makes it the newest, adding one past ``size`` drops
    the oldest. ``get`` answers ``None`` for a missing key, so values are never ``None``."""

    def __init__(self, size: int):
        if size < 1:
            raise ValueError(f"an LRU needs room for at least one entry, not {size}")
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
