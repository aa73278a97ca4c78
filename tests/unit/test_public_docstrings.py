"""Every public name documents its interface in Google-style sections, and the sections stay true.

For each name in ``skillbank.PUBLIC``: a function's ``Args:`` names exactly its parameters; a
class's docstring names exactly its constructor's parameters (``inspect.signature(cls)``) in
``Args:``; a data class (dataclass, pydantic model or named tuple) names exactly its fields in ``Attributes:``
(or gives a field a ``Field(description=...)``); an enum names its members in ``Attributes:``.
A function or method that returns something has a ``Returns:`` section, and every name under
``Raises:`` is an exception class. Every public method of a public class (no leading underscore,
defined by the class or a skillbank base, not inherited from pydantic, LangChain or ``object``)
is held to the same rules; a property needs only a docstring. ``*args``/``**kwargs`` are exempt.
"""

from __future__ import annotations

import builtins
import dataclasses
import enum
import functools
import importlib
import inspect
from typing import Any

import docstring_parser
import pytest
from pydantic import BaseModel

import skillbank

def own_doc(obj: Any) -> str:
    """The object's own docstring (a class without one would otherwise show its base's)."""
    raw = vars(obj).get("__doc__") if isinstance(obj, type) else obj.__doc__
    return inspect.cleandoc(raw or "")


def parse(obj: Any) -> docstring_parser.Docstring:
    return docstring_parser.parse(own_doc(obj), style=docstring_parser.DocstringStyle.GOOGLE)


def documented(doc: docstring_parser.Docstring, section: str) -> list[str]:
    return [p.arg_name for p in doc.params if p.args[0] == section]


def parameters(obj: Any) -> list[str]:
    return [p.name for p in inspect.signature(obj).parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in ("self", "cls")]


def var_parameters(obj: Any) -> set[str]:
    """``*args``/``**kwargs`` by name: an ``Args:`` entry for one (``*parts``) is allowed, not required."""
    try:
        found = inspect.signature(obj).parameters.values()
    except ValueError:
        return set()
    return {p.name for p in found if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


def documented_args(doc: docstring_parser.Docstring, obj: Any) -> list[str]:
    var = var_parameters(obj)
    return [a for a in documented(doc, "param") if a.lstrip("*") not in var]


def returns_something(func: Any) -> bool:
    annotation = inspect.signature(func).return_annotation
    return annotation not in (inspect.Signature.empty, None, "None")


def is_named_tuple(cls: type) -> bool:
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


def own_fields(cls: type) -> list[str]:
    """The fields a data class declares itself or inherits from skillbank (not, say, LangChain's)."""
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls)]
    if is_named_tuple(cls):
        return list(cls._fields)
    assert issubclass(cls, BaseModel)
    ours = [c for c in cls.__mro__ if c.__module__.startswith("skillbank")]
    return [name for name, info in cls.model_fields.items()
            if any(name in vars(c).get("__annotations__", {}) for c in ours) and not info.description]


def is_exception(name: str) -> bool:
    """``name`` (``ValueError``, ``SkillFileError``, ``pydantic.ValidationError``) is an exception
    class: a built-in, one of :mod:`skillbank.errors`, or a dotted path to one."""
    module, _, attr = name.rpartition(".")
    try:
        found = getattr(importlib.import_module(module), attr) if module else \
            getattr(builtins, attr, None) or getattr(importlib.import_module("skillbank.errors"), attr)
    except (ImportError, AttributeError):
        return False
    return isinstance(found, type) and issubclass(found, BaseException)


def raises_problems(name: str, doc: docstring_parser.Docstring) -> list[str]:
    return [f"{name}: Raises names {r.type_name!r}, no exception class"
            for r in doc.raises if not is_exception(r.type_name or "")]


def problems_of_function(name: str, func: Any) -> list[str]:
    doc = parse(func)
    args, params = documented_args(doc, func), parameters(func)
    problems = raises_problems(name, doc)
    if sorted(args) != sorted(params):
        problems.append(f"{name}: Args {sorted(args)} != parameters {sorted(params)}")
    if returns_something(func) and doc.returns is None:
        problems.append(f"{name}: returns a value but has no Returns section")
    return problems


def problems_of(name: str, obj: Any) -> list[str]:
    if inspect.isfunction(obj):
        return problems_of_function(name, obj)
    assert isinstance(obj, type), name
    doc = parse(obj)
    return raises_problems(name, doc) + class_problems(name, obj, doc)


def class_problems(name: str, cls: type, doc: docstring_parser.Docstring) -> list[str]:
    if issubclass(cls, enum.Enum):
        members, attrs = list(cls.__members__), documented(doc, "attribute")
        return [] if sorted(attrs) == sorted(members) else [f"{name}: Attributes {sorted(attrs)} != "
                                                             f"members {sorted(members)}"]
    if dataclasses.is_dataclass(cls) or issubclass(cls, BaseModel) or is_named_tuple(cls):
        fields, attrs = own_fields(cls), documented(doc, "attribute")
        missing = sorted(set(fields) - set(attrs))
        stale = sorted(a for a in attrs if a not in fields and not hasattr(cls, a)
                       and a not in getattr(cls, "model_fields", {}))
        return [f"{name}: fields without an Attributes entry {missing}"] * bool(missing) + \
               [f"{name}: Attributes entries that are no field {stale}"] * bool(stale)
    try:
        params = parameters(cls)
    except ValueError:  # a built-in constructor (an exception without __init__ of its own)
        params = []
    args = documented_args(doc, cls)
    return [] if sorted(args) == sorted(params) else [f"{name}: Args {sorted(args)} != constructor "
                                                      f"parameters {sorted(params)}"]


def public_methods(cls: type) -> dict[str, Any]:
    """The public methods and properties ``cls`` resolves to a skillbank class (itself or a base),
    by name: what ``BaseModel``, a LangChain base or ``object`` defines is theirs to document."""
    # A dataclass field whose default is a function (``RecordingConfig.refusal_detector``) is an
    # attribute, documented under the class's ``Attributes:``, not a method.
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    found = {}
    for attr in dir(cls):
        owner = next((c for c in cls.__mro__ if attr in vars(c)), None)
        if attr.startswith("_") or attr in fields or owner is None \
                or not owner.__module__.startswith("skillbank"):
            continue
        value = vars(owner)[attr]
        if isinstance(value, (classmethod, staticmethod, property, functools.cached_property)) \
                or inspect.isfunction(value):
            found[attr] = value
    return found


PUBLIC_METHODS = {f"{name}.{attr}": value for name in sorted(skillbank.PUBLIC)
                  if isinstance(getattr(skillbank, name), type)
                  for attr, value in public_methods(getattr(skillbank, name)).items()}


def method_problems(name: str, value: Any) -> list[str]:
    if isinstance(value, (property, functools.cached_property)):
        return [] if own_doc(value) else [f"{name}: a property without a docstring"]
    func = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
    return problems_of_function(name, func)


@pytest.mark.parametrize("name", sorted(skillbank.PUBLIC))
def test_a_public_name_documents_its_interface(name):
    assert problems_of(name, getattr(skillbank, name)) == []


def test_the_method_discovery_finds_the_banks_methods_and_not_the_frameworks():
    assert {"SkillBank.open", "SkillBank.transaction", "SkillBank.search", "LLMJudge.judge",
            "SkillBankMiddleware.wrap_model_call", "ScriptedChatModel.bind_tools"} <= set(PUBLIC_METHODS)
    assert not {"Skill.model_dump", "ScriptedChatModel.invoke", "SkillHit.count"} & set(PUBLIC_METHODS)


@pytest.mark.parametrize("name", sorted(PUBLIC_METHODS))
def test_a_public_method_documents_its_interface(name):
    assert method_problems(name, PUBLIC_METHODS[name]) == []


def test_a_stale_or_missing_entry_is_caught():
    def stale(a: int, b: int) -> int:
        """Add.

        Args:
            a: one.
            c: gone.

        Returns:
            The sum.
        """
        return a + b

    @dataclasses.dataclass
    class Config:
        """A config.

        Attributes:
            x: kept.
        """

        x: int = 0
        y: int = 1

    def raises_nothing_real(a: int) -> None:
        """Check.

        Args:
            a: one.

        Raises:
            GoneError: never defined.
        """

    assert problems_of("stale", stale) == ["stale: Args ['a', 'c'] != parameters ['a', 'b']"]
    assert problems_of("raises_nothing_real", raises_nothing_real) == [
        "raises_nothing_real: Raises names 'GoneError', no exception class"]
    assert problems_of("Config", Config) == ["Config: fields without an Attributes entry ['y']"]

    class Holder:
        @property
        def bare(self) -> int:
            return 1

        @classmethod
        def build(cls, size: int) -> "Holder":
            """Build one."""
            return cls()

    found = {name: method_problems(name, value) for name, value in vars(Holder).items()
             if name in ("bare", "build")}
    assert found == {"bare": ["bare: a property without a docstring"],
                     "build": ["build: Args [] != parameters ['size']",
                               "build: returns a value but has no Returns section"]}
