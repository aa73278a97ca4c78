"""Public names import; declared lower bounds are the ones CI pins and tests."""

import re
import tomllib
from pathlib import Path

import skillbank

ROOT = Path(__file__).resolve().parents[1]


def test_public_names_import():
    for name in skillbank.__all__:
        assert getattr(skillbank, name) is not None, name


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


def test_only_one_top_level_package_is_installed():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["packages"]["find"]["include"] == ["skillbank*"]


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
