"""Damaged caches are named, served around and rebuilt (issue 32, item 4), on SQLite and PostgreSQL.

The caches derived from the versions: the embedding cache (the ``embeddings`` table: below the
exact-search cap it *is* the index) and each skill's current row (``skills``, under the
parsed-content and built-skill caches). Before: one 7-byte vector made ``search``, ``verify``
and ``reindex`` die with numpy's ``buffer size must be a multiple of element size``.

For each damage: ``verify`` names it (skill or hash, and what is wrong) and exits 1; ``search``
serves, with a warning where it re-embeds; ``reindex`` rebuilds from the versions, after which
``verify`` passes and no version was lost.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from typer.testing import CliRunner

from skillbank import SkillBank
from skillbank.cli import app

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("cli_env")

TOPICS = ["battery before climate", "refund after eligibility", "free calendar slot"]
EMBEDDER = "hash:256"


@pytest.fixture(params=["sqlite", "postgres"])
def target(request, tmp_path):
    """Where the bank goes: a folder, or a new database on the session's PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "bank")
    return request.getfixturevalue("pg_server").create_database()


def used_bank(target: str) -> dict[str, str]:
    """Three active skills (one updated, one retired besides), searched once so their vectors are
    cached; their ids by name."""
    with SkillBank.open(target, embedder="hash") as bank:
        ids = {f"skill-{i}": bank.add_skill(name=f"skill-{i}", description=f"check the {t}",
                                            body=f"Do the {t} check.").id for i, t in enumerate(TOPICS)}
        bank.update_skill(ids["skill-0"], body="Do the battery check before the climate.", reason="edit")
        old = bank.add_skill(name="old", description="an old way", body="Retired.")
        bank.retire(old.id, reason="superseded")
        assert bank.search("battery climate", k=1)[0].skill.name == "skill-0"
        assert bank.verify().ok
    return ids


def execute(target: str, sql: str, params: tuple = ()) -> None:
    """Damage the database behind the library's back (any backend: the store's own connection)."""
    with SkillBank.open(target, embedder="hash") as bank, bank.store.transaction() as conn:
        conn.execute(sql, params)


def versions(target: str) -> list[tuple]:
    with SkillBank.open(target, embedder="hash") as bank:
        return [tuple(r.values()) for r in bank.store.query(
            "SELECT skill_id, version, content_hash, body FROM skill_versions ORDER BY skill_id, version")]


def current_hash(target: str, skill_id: str) -> str:
    with SkillBank.open(target, embedder="hash") as bank:
        return bank.get_skill(skill_id).content_hash


def set_vector(target: str, skill_id: str, raw: bytes) -> None:
    execute(target, "UPDATE embeddings SET vector = ? WHERE content_hash = ? AND embedder = ?",
            (raw, current_hash(target, skill_id), EMBEDDER))


# Each damage: what it does to a used bank, and what verify's line must say about it.
def _wrong_length(target, ids):
    set_vector(target, ids["skill-1"], b"1234567")


def _wrong_dimension(target, ids):
    set_vector(target, ids["skill-1"], np.ones(128, dtype=np.float32).tobytes())


def _nan(target, ids):
    vector = np.ones(256, dtype=np.float32)
    vector[7] = np.nan
    set_vector(target, ids["skill-1"], vector.tobytes())


def _infinite(target, ids):
    vector = np.ones(256, dtype=np.float32)
    vector[0] = np.inf
    set_vector(target, ids["skill-1"], vector.tobytes())


def _orphan(target, ids):
    execute(target, "INSERT INTO embeddings (content_hash, embedder, vector) VALUES (?, ?, ?)",
            ("sha256:" + "ab" * 32, EMBEDDER, np.ones(256, dtype=np.float32).tobytes()))


def _missing(target, ids):
    execute(target, "DELETE FROM embeddings WHERE content_hash = ? AND embedder = ?",
            (current_hash(target, ids["skill-1"]), EMBEDDER))


def _row_body(target, ids):
    execute(target, "UPDATE skills SET body = ? WHERE id = ?", ("tampered", ids["skill-1"]))


def _row_tags(target, ids):
    execute(target, "UPDATE skills SET tags = ? WHERE id = ?", ("{not json", ids["skill-1"]))


def _row_kind(target, ids):
    execute(target, "UPDATE skills SET kind = ? WHERE id = ?", ("nonsense", ids["skill-1"]))


def _row_status(target, ids):
    execute(target, "UPDATE skills SET status = ? WHERE name = ?", ("active", "old"))


DAMAGES = {
    "wrong length": (_wrong_length, ["skill-1", "7 bytes, not a whole number of float32 values"]),
    "wrong dimension": (_wrong_dimension, ["skill-1", "128 dimensions where the embedder makes 256"]),
    "NaN": (_nan, ["skill-1", "NaN or infinite values"]),
    "infinity": (_infinite, ["skill-1", "NaN or infinite values"]),
    "orphan": (_orphan, ["sha256:abababababab", "a vector for a hash no version has"]),
    "missing": (_missing, ["skill-1", "its vector is missing"]),
    "row body": (_row_body, ["skill-1", "differs from its latest version v1 in body"]),
    "row tags": (_row_tags, ["skill-1", "differs from its latest version v1 in tags"]),
    "row kind": (_row_kind, ["skill-1", "differs from its latest version v1 in kind"]),
    "row status": (_row_status, ["old", "differs from its latest version v2 in status"]),
}


@pytest.fixture(params=DAMAGES)
def damaged(request, target):
    ids = used_bank(target)
    before = versions(target)
    damage, says = DAMAGES[request.param]
    damage(target, ids)
    return target, ids, before, says, request.param


def _no_traceback(result) -> None:
    assert "Traceback" not in result.output and "Error:" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


def test_a_seven_byte_vector_no_longer_kills_search_verify_or_reindex(target):
    """The issue's report, as it was filed."""
    ids = used_bank(target)
    _wrong_length(target, ids)
    for command in (["verify"], ["search", "refund eligibility"], ["reindex"]):
        result = runner.invoke(app, [*command, "-d", target])
        _no_traceback(result)
        assert "buffer size must be a multiple" not in result.output


def test_verify_names_each_damage_and_exits_1(damaged):
    target, ids, _, says, name = damaged
    result = runner.invoke(app, ["verify", "-d", target])
    _no_traceback(result)
    assert result.exit_code == 1, result.output
    problems = [line for line in result.output.splitlines() if line.strip().startswith("- ")]
    who, what = says
    who = ids.get(who, who)  # a vector's line names the skill's id; a row's, its id and name
    named = [p for p in problems if who in p and what in p]
    assert len(named) == 1 and "skillbank reindex" in named[0], result.output
    # The index's own check may add its view of the same damage, never a crash or a stranger.
    assert len(problems) <= 2, result.output


def test_search_keeps_serving_and_warns_where_it_re_embeds(damaged, caplog):
    target, ids, _, _, name = damaged
    with caplog.at_level(logging.WARNING, logger="skillbank"):
        with SkillBank.open(target, embedder="hash") as bank:
            hits = bank.search("refund eligibility", k=1)
            assert hits and hits[0].skill.name == "skill-1"
            assert hits[0].skill.body == ("tampered" if name == "row body" else
                                          "Do the refund after eligibility check.")
    said = [r.getMessage() for r in caplog.records]
    if name in ("wrong length", "wrong dimension", "NaN", "infinity"):
        assert any("unreadable vector" in s and "embedding them again" in s for s in said), said
    if name in ("row tags", "row kind"):
        assert any(ids["skill-1"] in s and "serving its latest version" in s for s in said), said
    result = runner.invoke(app, ["search", "refund eligibility", "-d", target])
    _no_traceback(result)
    assert result.exit_code == 0 and "skill-1" in result.output, result.output


def test_reindex_rebuilds_from_the_versions(damaged):
    target, ids, before, _, name = damaged
    result = runner.invoke(app, ["reindex", "-d", target])
    _no_traceback(result)
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["verify", "-d", target])
    assert result.exit_code == 0, result.output
    assert versions(target) == before
    with SkillBank.open(target, embedder="hash") as bank:
        assert bank.get_skill("skill-1").body == "Do the refund after eligibility check."
        assert bank.get_skill("old").status.value == "retired"
        assert bank.search("refund eligibility", k=1)[0].skill.name == "skill-1"
        assert not [r for r in bank.store.query("SELECT content_hash FROM embeddings")
                    if r["content_hash"] == "sha256:" + "ab" * 32]


def test_pgvector_search_serves_past_a_damaged_cached_vector(pg_server, monkeypatch, caplog):
    """Above the exact-search cap a PostgreSQL bank searches its pgvector table, which reads
    each hit's vector from the embedding cache: a damaged one falls back to the table's own."""
    monkeypatch.setenv("SKILLBANK_EXACT_MAX", "0")
    target = pg_server.create_database()
    ids = used_bank(target)
    for damage in (_wrong_length, _nan):
        damage(target, ids)
        with caplog.at_level(logging.WARNING, logger="skillbank"):
            with SkillBank.open(target, embedder="hash") as bank:
                assert bank.index.mode == "hnsw"
                assert bank.search("refund eligibility", k=1)[0].skill.name == "skill-1"
        result = runner.invoke(app, ["verify", "-d", target])
        assert result.exit_code == 1 and ids["skill-1"] in result.output, result.output
        assert runner.invoke(app, ["reindex", "-d", target]).exit_code == 0
        assert runner.invoke(app, ["verify", "-d", target]).exit_code == 0
    # tags that are not JSON fail pgvector's filter cast: the search filters after it instead
    execute(target, "UPDATE skills SET tags = ? WHERE id = ?", ("{not json", ids["skill-2"]))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="skillbank"), SkillBank.open(target, embedder="hash") as bank:
        assert bank.index.mode == "hnsw"
        assert [h.skill.name for h in bank.search("refund eligibility", k=1, tags=["nothing"])] == []
        assert any("filtering after the search" in r.getMessage() for r in caplog.records)
        assert bank.search("calendar slot", k=1, kinds=["procedure"])[0].skill.name == "skill-2"
    for command in (["verify"], ["search", "calendar slot", "--tag", "x"], ["reindex"]):
        _no_traceback(runner.invoke(app, [*command, "-d", target]))
    assert runner.invoke(app, ["verify", "-d", target]).exit_code == 0


def test_an_embedder_that_does_not_say_its_size_still_finds_a_wrong_dimension(tmp_path, caplog):
    """A model embedder has no ``dim``: the commonest cached size is expected, so one vector of
    another size is named and embedded again, not stacked into the search matrix."""
    from skillbank.embed import CallableEmbedder, HashEmbedder

    hasher = HashEmbedder(256)

    def model():  # the same vectors as the hash embedder, under a name of its own, no dim
        return CallableEmbedder(lambda texts: hasher.embed(texts), name="model-without-dim")

    target = str(tmp_path / "bank")
    with SkillBank.open(target, embedder=model()) as bank:
        for i, t in enumerate(TOPICS):
            bank.add_skill(name=f"skill-{i}", description=f"check the {t}", body=f"Do the {t} check.")
        assert bank.search("refund eligibility", k=1)[0].skill.name == "skill-1"
        chash = bank.get_skill("skill-1").content_hash
    execute(target, "UPDATE embeddings SET vector = ? WHERE content_hash = ?",
            (np.ones(128, dtype=np.float32).tobytes(), chash))
    with SkillBank.open(target, embedder=model()) as bank:
        problems = bank.verify(check_index=False).problems
        assert len(problems) == 1 and "128 dimensions where the embedder makes 256" in problems[0], problems
    with caplog.at_level(logging.WARNING, logger="skillbank"):
        with SkillBank.open(target, embedder=model()) as bank:
            assert bank.search("refund eligibility", k=1)[0].skill.name == "skill-1"
            assert bank.verify().ok  # embedded again and cached over the damaged row
    assert any("unreadable vector" in r.getMessage() for r in caplog.records)
