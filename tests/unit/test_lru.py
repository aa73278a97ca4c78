"""The shared in-memory LRU: its size bound and recency on read."""

from __future__ import annotations

import pytest

from skillbank._lru import LRU


def test_the_least_recently_used_entry_goes_first():
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # now "b" is the oldest
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c"), len(cache)) == (1, None, 3, 2)
    cache.put("a", 10)  # replacing refreshes too
    cache.put("d", 4)
    assert (cache.get("a"), cache.get("c")) == (10, None)
    cache.clear()
    assert len(cache) == 0 and cache.get("a") is None


def test_a_cache_without_room_is_refused():
    with pytest.raises(ValueError, match="at least one"):
        LRU(0)
