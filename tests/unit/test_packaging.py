"""Public names import; declared lower bounds are the ones CI pins and tests."""

import re
import tomllib
from pathlib import Path

import skillbank

ROOT = Path(__file__).resolve().parents[2]


def test_public_names_import():
    """``from skillbank import *`` binds every public name, each one skillbank's own object
    (not a placeholder, not a re-export of another library), and the version is the project's."""
    namespace: dict = {}
    exec("from skillbank import *", namespace)
    assert len(set(skillbank.__all__)) == len(skillbank.__all__), "a name is listed twice"
    for name in skillbank.__all__:
        if name == "__version__":
            continue
        obj = namespace[name]
        assert obj is getattr(skillbank, name)
        assert (getattr(obj, "__module__", None) or "").split(".")[0] == "skillbank", (name, obj)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert skillbank.__version__ == project["version"]


def test_lower_bounds_match_the_ci_pins():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {}
    for spec in project["dependencies"] + project["optional-dependencies"]["dev"]:
        name, floor = re.fullmatch(r"([A-Za-z0-9_.\-]+)>=([0-9][0-9.]*)", spec).groups()
        declared[name.lower()] = floor
    pinned = {}
    for line in (ROOT / ".ci" / "lower-bounds.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pinned[name.lower()] = version
    assert declared == pinned


def test_only_the_library_and_the_harness_are_installed():
    """What setuptools finds with pyproject's settings: every package of the library and the
    harness, and nothing else (no tests, benchmarks, examples or scripts at the top level)."""
    from setuptools import find_packages

    find = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    found = set(find_packages(where=str(ROOT), include=find["include"], exclude=find.get("exclude", ())))
    assert {name.split(".")[0] for name in found} == {"skillbank", "skillbank_harness"}
    on_disk = {".".join(p.parent.relative_to(ROOT).parts)
               for top in ("skillbank", "skillbank_harness") for p in (ROOT / top).rglob("__init__.py")}
    assert found == on_disk, sorted(on_disk ^ found)


def test_every_template_ships_as_package_data():
    """Non-Python files reach a wheel only through package-data: the report template must."""
    from fnmatch import fnmatch

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    templates = sorted((ROOT / "skillbank").rglob("templates/*"))
    assert templates
    for path in templates:
        package = ".".join(path.parent.parent.relative_to(ROOT).parts)
        relative = f"{path.parent.name}/{path.name}"
        assert any(fnmatch(relative, pattern) for pattern in data.get(package, [])), relative
