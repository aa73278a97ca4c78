"""Random damage to a bank's caches never shows a traceback and never loses a version (issue 32, item 4).

Hypothesis damages random rows and random bytes of the two caches derived from the versions,
the embedding cache and each skill's current row, on SQLite and PostgreSQL; then every command
a user would reach for runs through the CLI: ``verify`` (0 or 1), ``search``, ``skills list``,
``stats``, ``reindex``; after ``reindex`` ``verify`` passes, and the versions are exactly the
ones there were. Each example searches exactly (the cache is the index) or through HNSW.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from skillbank import SkillBank
from skillbank.cli import app
from skillbank.store._cache_check import ROW_COLUMNS
from test_hardening_caches import used_bank, versions

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("cli_env")

_TEXT_COLUMNS = [c for c in ROW_COLUMNS if c not in ("pinned", "version")]
_JSONISH = st.sampled_from(["", "[]", "{", "[1, 2]", '["general"]', "null", "5", '{"a": 1}', "active",
                            "retired", "candidate", "nonsense", "sha256:00"])

# One damage: what it does, which row (an index taken modulo the rows there are) and with what.
DAMAGE = st.one_of(
    st.tuples(st.just("vector bytes"), st.integers(0, 50), st.binary(max_size=1100)),
    st.tuples(st.just("vector byte"), st.integers(0, 50), st.integers(0, 1023), st.integers(0, 255)),
    st.tuples(st.just("vector delete"), st.integers(0, 50)),
    st.tuples(st.just("vector orphan"), st.text("0123456789abcdef", min_size=1, max_size=64), st.binary(max_size=1100)),
    st.tuples(st.just("vector rehash"), st.integers(0, 50), st.text("0123456789abcdef", min_size=1, max_size=64)),
    st.tuples(st.just("row text"), st.integers(0, 50), st.sampled_from(_TEXT_COLUMNS), st.text(max_size=40) | _JSONISH),
    st.tuples(st.just("row number"), st.integers(0, 50), st.sampled_from(["pinned", "version"]), st.integers(-3, 99)),
)


def _damage(target: str, damages: list[tuple]) -> int:
    """Apply each damage the database accepts (a unique name, a NUL on PostgreSQL: refused and
    skipped); how many were applied."""
    applied = 0
    with SkillBank.open(target, embedder="hash") as bank:
        store = bank.store
        for damage in damages:
            kind, *args = damage
            vectors = store.query("SELECT content_hash, embedder, vector FROM embeddings ORDER BY content_hash")
            skills = store.query("SELECT id FROM skills ORDER BY id")
            try:
                with store.transaction() as conn:
                    if kind.startswith("vector") and kind != "vector orphan":
                        if not vectors:
                            continue
                        row = vectors[args[0] % len(vectors)]
                        key = (row["content_hash"], row["embedder"])
                    if kind == "vector bytes":
                        conn.execute("UPDATE embeddings SET vector = ? WHERE content_hash = ? AND embedder = ?",
                                     (args[1], *key))
                    elif kind == "vector byte":
                        raw = bytearray(bytes(row["vector"]))
                        raw[args[1] % len(raw)] = args[2]
                        conn.execute("UPDATE embeddings SET vector = ? WHERE content_hash = ? AND embedder = ?",
                                     (bytes(raw), *key))
                    elif kind == "vector delete":
                        conn.execute("DELETE FROM embeddings WHERE content_hash = ? AND embedder = ?", key)
                    elif kind == "vector orphan":
                        conn.execute("INSERT INTO embeddings (content_hash, embedder, vector) VALUES (?, ?, ?)",
                                     ("sha256:" + args[0], "hash:256", args[1]))
                    elif kind == "vector rehash":
                        conn.execute("UPDATE embeddings SET content_hash = ? WHERE content_hash = ? AND embedder = ?",
                                     ("sha256:" + args[1], *key))
                    else:  # a column of a skill's current row
                        sid = skills[args[0] % len(skills)]["id"]
                        conn.execute(f"UPDATE skills SET {args[1]} = ? WHERE id = ?", (args[2], sid))
                applied += 1
            except Exception:  # noqa: BLE001 - a constraint said no: that damage cannot happen
                continue
    return applied


def _run(command: list[str], target: str, codes: tuple[int, ...]) -> None:
    result = runner.invoke(app, [*command, "-d", target])
    shown = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert "Traceback" not in shown, (command, shown)
    assert result.exception is None or isinstance(result.exception, SystemExit), (command, repr(result.exception))
    assert result.exit_code in codes, (command, result.exit_code, shown)


def _check(target: str, damages: list[tuple], hnsw: bool) -> None:
    # Below the exact-search cap the embedding cache is the index; at 0 the HNSW index (Chroma's
    # directory, pgvector's table) is searched and the cache only feeds it.
    previous = os.environ.get("SKILLBANK_EXACT_MAX")
    os.environ["SKILLBANK_EXACT_MAX"] = "0" if hnsw else "50000"
    try:
        _commands(target, damages)
    finally:
        if previous is None:
            os.environ.pop("SKILLBANK_EXACT_MAX", None)
        else:
            os.environ["SKILLBANK_EXACT_MAX"] = previous


def _commands(target: str, damages: list[tuple]) -> None:
    used_bank(target)
    before = versions(target)
    _damage(target, damages)
    _run(["verify"], target, (0, 1))
    _run(["search", "refund eligibility"], target, (0,))
    _run(["skills", "list"], target, (0,))
    _run(["stats"], target, (0,))
    _run(["verify"], target, (0, 1))
    _run(["reindex"], target, (0,))
    _run(["verify"], target, (0,))  # rebuilt from the versions: nothing left to name
    _run(["search", "refund eligibility"], target, (0,))
    assert versions(target) == before


@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(damages=st.lists(DAMAGE, min_size=1, max_size=4), hnsw=st.booleans())
def test_random_damage_on_sqlite(tmp_path_factory, damages, hnsw):
    _check(str(tmp_path_factory.mktemp("damaged") / "bank"), damages, hnsw)


@settings(max_examples=6, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(damages=st.lists(DAMAGE, min_size=1, max_size=4), hnsw=st.booleans())
def test_random_damage_on_postgres(pg_server, damages, hnsw):
    _check(pg_server.create_database(), damages, hnsw)
