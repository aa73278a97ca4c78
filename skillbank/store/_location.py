"""Where a bank lives and opening its store there: a folder (a SQLite file beside its index) or
a PostgreSQL connection string.

A folder is refused unless it is a bank, empty or new, so a typo never scatters files into an
unrelated folder; a database file emptied behind the bank's back is refused as damaged.
"""

from __future__ import annotations

import os
from pathlib import Path

from skillbank.errors import CorruptBankError, NotABankError
from skillbank.store._base import Store
from skillbank.store._index import INDEX_DIR
from skillbank.store._postgres import is_database_url
from skillbank.store._sqlite import DB_FILENAME, SQLiteStore

__all__ = ["DEFAULT_DIR", "ENV_DIR", "open_store"]

DEFAULT_DIR = ".skillbank"
ENV_DIR = "SKILLBANK_DIR"
# Files that only a bank which has been used leaves beside its database.
_USED_BANK_SIGNS = (INDEX_DIR, "evolve.lock")


def open_store(path: str | Path | None, *, create: bool, read_only: bool = False) -> tuple[Path | None, Store]:
    """The bank folder (``None`` for a database server) and the store in it; see ``SkillBank.open``.

    ``read_only=True`` (implies ``create=False``) opens an existing SQLite bank so that nothing
    can be written to its folder; on PostgreSQL it has no effect yet.
    """
    create = create and not read_only
    target = path if path is not None else (os.environ.get(ENV_DIR) or DEFAULT_DIR)
    if is_database_url(target):
        from skillbank.store._postgres import PostgresStore

        return None, PostgresStore.open(str(target), create=create)
    folder = Path(target)
    db_path = folder / DB_FILENAME
    if db_path.exists():
        _refuse_emptied_database(folder, db_path, create=create)
    else:
        if folder.exists() and not folder.is_dir():
            raise NotABankError(f"{folder} is a file, not a skill bank folder")
        if folder.exists() and any(folder.iterdir()):
            raise NotABankError(
                f"{folder} is not a skill bank (no {DB_FILENAME}) and is not empty; "
                "choose an empty or new folder"
            )
        if not create:
            raise NotABankError(
                f"no skill bank at {folder}; create one with `skillbank init -d {folder}` "
                "or SkillBank.open(path)"
            )
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise NotABankError(f"cannot create a skill bank at {folder}: {exc.strerror}") from exc
    # Read-only too: SQLite's readers of a WAL database need to make its -shm file there.
    if not os.access(folder, os.W_OK):
        raise NotABankError(
            f"the skill bank folder {folder} is not writable; fix its permissions or "
            "choose another folder with -d / SKILLBANK_DIR"
        )
    return folder, SQLiteStore.open(db_path, read_only=read_only)


def _refuse_emptied_database(folder: Path, db_path: Path, *, create: bool) -> None:
    """A 0-byte database beside the files a used bank leaves is a damaged bank, not a new one;
    alone, it becomes a new bank only when the caller may create one."""
    if db_path.stat().st_size != 0:
        return
    signs = [name for name in _USED_BANK_SIGNS
             if (folder / name).exists() and (not (folder / name).is_dir() or any((folder / name).iterdir()))]
    wal = Path(f"{db_path}-wal")
    if wal.exists() and wal.stat().st_size:
        signs.append(wal.name)
    if signs:
        raise CorruptBankError(
            f"{db_path} is empty (0 bytes) but {folder} holds {', '.join(signs)}: this bank once "
            "held data and its database was truncated or replaced. Nothing was written; restore "
            f"{DB_FILENAME} from a backup (or move the folder aside to start a new bank)."
        )
    if not create:
        raise NotABankError(
            f"{db_path} is empty (0 bytes): it holds no skill bank, and nothing was written. Restore "
            f"{DB_FILENAME} from a backup if this bank held data, or run `skillbank init -d {folder}` "
            "to start a new bank there."
        )
