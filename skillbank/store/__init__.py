"""The bank's source of truth, behind one repository interface (:class:`Store`).

Implementations: :class:`SQLiteStore` (the embedded default) and :class:`PostgresStore`
(``pip install 'skillbank[postgres]'``). The repositories (``skills``, ``trajectories``,
``evidence``, ``embeddings``) hold every query; nothing outside this package writes SQL.
"""

from skillbank.store._base import Dialect, Store
from skillbank.store._postgres import PostgresStore, is_database_url
from skillbank.store._sqlite import SQLiteStore

__all__ = ["Dialect", "PostgresStore", "SQLiteStore", "Store", "is_database_url"]
