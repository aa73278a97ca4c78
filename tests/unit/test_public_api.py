"""The public surface is one list (``skillbank.PUBLIC``), the README documents exactly that list,
and importing the package stays cheap (each name loads its module on first use)."""

import re
import subprocess
import sys
from pathlib import Path

import skillbank

ROOT = Path(__file__).resolve().parents[2]


def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def test_the_readme_lists_exactly_the_public_names():
    listed = [name for line in readme_section("Public API").splitlines() if line.startswith("- ")
              for name in re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", line.split(":", 1)[1])]
    assert len(listed) == len(set(listed)), "a name is listed twice in the README"
    assert set(listed) == set(skillbank.PUBLIC)
    assert set(skillbank.__all__) == set(skillbank.PUBLIC) | {"__version__"}


def test_every_public_name_comes_from_the_module_that_defines_it():
    for name, module in skillbank.PUBLIC.items():
        obj = getattr(skillbank, name)
        # a function or class says where it was defined; the table must name that module, so a
        # name has one home and the table never points at a re-export
        assert getattr(obj, "__module__", module) == module, (name, module, obj)


def test_the_quick_start_imports_only_from_the_package():
    blocks = re.findall(r"```python\n(.*?)```", readme_section("Quick start"), re.S)
    imports = [line for block in blocks for line in block.splitlines()
               if re.match(r"\s*(from|import) skillbank", line)]
    assert imports and all(re.match(r"\s*from skillbank import ", line) for line in imports), imports
    for example in ("quickstart_agent.py", "local_agent.py"):
        source = (ROOT / "examples" / example).read_text(encoding="utf-8")
        assert not re.search(r"(from|import) skillbank\.", source), example


def test_importing_the_package_loads_none_of_its_modules():
    code = ("import sys, skillbank; "
            "print(sorted(m for m in sys.modules if m.startswith(('skillbank.', 'langchain', 'numpy'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_an_unknown_name_is_an_attribute_error():
    try:
        skillbank.InjectOnlyMiddleware
    except AttributeError as exc:
        assert "InjectOnlyMiddleware" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("a removed name still resolves")


def test_the_harness_imports_nothing_private_from_the_library():
    private = re.compile(r"(from|import) skillbank(\.[a-z0-9_]+)*\._")
    for path in (ROOT / "skillbank_harness").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert not private.search(source), path


def _extension_modules() -> set[str]:
    """The modules the README names as public for extensions (``a.{b,c}`` spelled out)."""
    section = readme_section("Public API")
    text = section[section.index("Public for extensions"):].split("\n\n")[0]
    out: set[str] = set()
    for name in re.findall(r"`(skillbank\.[\w.{},]+)`", text):
        head, _, rest = name.partition("{")
        out |= {head + part for part in rest.rstrip("}").split(",")} if rest else {name}
    return out


def test_every_module_is_public_or_private():
    public = set(skillbank.PUBLIC.values()) | _extension_modules()
    documented = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "examples").rglob("*.py")]
    for path in documented:
        public |= set(re.findall(r"(?:from|import) (skillbank(?:\.\w+)+)", path.read_text(encoding="utf-8")))
    package = ROOT / "skillbank"
    neither = []
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] in ("__init__", "__main__"):
            continue  # a package is as public as what its __init__ exports
        name = ".".join(parts)
        private = any(part.startswith("_") for part in parts[1:])
        if not private and name not in public:
            neither.append(name)
    assert not neither, ("neither public (skillbank.PUBLIC, the README, docs/ or examples/) nor private "
                         f"(underscored): {neither}; underscore the module or document it")


def test_the_extension_modules_exist_and_are_public():
    modules = _extension_modules()
    assert "skillbank.consistency.runner" in modules and "skillbank.cli.options" in modules
    for name in modules:
        assert (ROOT / (name.replace(".", "/") + ".py")).is_file(), name
        assert not any(part.startswith("_") for part in name.split(".")[1:]), name
