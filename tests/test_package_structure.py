"""The package's structure rules, read from the source: which folder may import which, and the wheel's packages.

Why a test: the library must serve families it has never heard of, so generic
code (everything under ``agentenv/``) reaches families only through the
registry (:mod:`agentenv.families`). One convenient import of a family module
would quietly undo that, so every import statement, at module level or inside
a function, and every ``importlib.import_module("…")`` / ``__import__("…")``
with a literal name is checked here.

Rules (source folder -> the packages it must never import):

* ``agentenv/`` -> ``agentenv.envs``, ``agentenv.corpora``, ``agentenv.baselines``
* ``envs/``     -> ``agentenv.baselines``
* ``corpora/``  -> ``agentenv.envs``, ``agentenv.baselines``
* ``baselines/`` may import anything.
"""

from __future__ import annotations

import ast
import configparser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: source folder -> (its package name, packages it must not import)
RULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "agentenv": ("agentenv", ("agentenv.envs", "agentenv.corpora", "agentenv.baselines")),
    "envs": ("agentenv.envs", ("agentenv.baselines",)),
    "corpora": ("agentenv.corpora", ("agentenv.envs", "agentenv.baselines")),
    "baselines": ("agentenv.baselines", ()),
}


def module_name(path: Path, folder: str) -> str:
    """The dotted module name of a source file under one of the mapped folders."""
    package = RULES[folder][0]
    parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([package, *parts])


def imported_modules(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """Every module ``source`` imports, with its line: statements anywhere, and literal dynamic imports.

    Example:
        >>> imported_modules("from ..envs import x\\nimport json", "agentenv.data.sft")
        [(1, 'agentenv.envs'), (1, 'agentenv.envs.x'), (2, 'json')]
        >>> imported_modules("def f():\\n    importlib.import_module('agentenv.baselines.agent')", "agentenv.x")
        [(2, 'agentenv.baselines.agent')]
    """
    found: list[tuple[int, str]] = []
    base = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join([*anchor, node.module] if node.module else anchor)
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            found += [
                (node.lineno, f"{target}.{alias.name}") for alias in node.names if alias.name != "*"
            ]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                found.append((node.lineno, node.args[0].value))
    return found


def violations(folder: str) -> list[str]:
    """``path:line imports X`` for every import in ``folder`` that its rule forbids."""
    package, forbidden = RULES[folder]
    out = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        if "tests" in path.relative_to(ROOT / folder).parts:
            continue
        module = module_name(path, folder)
        source = path.read_text(encoding="utf-8")
        reported: set[int] = set()
        for line, target in imported_modules(source, module, path.name == "__init__.py"):
            if line not in reported and any(
                target == f or target.startswith(f + ".") for f in forbidden
            ):
                reported.add(line)
                out.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    return out


@pytest.mark.parametrize("folder", sorted(RULES))
def test_imports_follow_the_dependency_direction(folder: str) -> None:
    found = violations(folder)
    assert not found, (
        f"{folder}/ must not import {', '.join(RULES[folder][1])}; reach families through "
        "agentenv.families instead:\n" + "\n".join(found)
    )


def test_the_rule_catches_a_forbidden_import(tmp_path: Path) -> None:
    """The check itself fails on the kinds of import it exists to stop (lazy, relative, dynamic)."""
    sources = [
        "from agentenv.envs.media_search.env import MediaSearchEnv",
        "def f():\n    from agentenv.baselines.agent import make_agent",
        "from ..corpora.media import load_catalog",
        "import importlib\nimportlib.import_module('agentenv.envs.rare_disease')",
        "import agentenv.baselines.oracle as oracle",
    ]
    forbidden = RULES["agentenv"][1]
    for source in sources:
        targets = [t for _, t in imported_modules(source, "agentenv.evaluation.runner")]
        assert any(t.startswith(forbidden) for t in targets), source
    allowed = "from agentenv.families import get_family\nfrom ..core import Task"
    assert not any(
        t.startswith(forbidden) for _, t in imported_modules(allowed, "agentenv.evaluation.runner")
    )


def test_relative_imports_resolve_from_the_package() -> None:
    assert imported_modules("from . import env", "agentenv.envs.media_search", is_package=True) == [
        (1, "agentenv.envs.media_search"),
        (1, "agentenv.envs.media_search.env"),
    ]
    assert imported_modules("from .env import X", "agentenv.envs.media_search.tools")[0] == (
        1,
        "agentenv.envs.media_search.env",
    )


def test_every_source_package_is_in_the_wheel() -> None:
    """setup.cfg lists packages by hand (the folders map onto agentenv.*): a new folder must not miss the wheel."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    listed = set(config["options"]["packages"].split())
    on_disk = {
        module_name(init, folder).removesuffix(".__init__")
        for folder in RULES
        for init in (ROOT / folder).rglob("__init__.py")
        if "tests" not in init.relative_to(ROOT / folder).parts
    }
    missing = sorted(on_disk - listed)
    assert not missing, (
        f"add these to 'packages =' in setup.cfg, or they are left out of the wheel: {missing}"
    )
    # A second import name for a folder already listed (package_dir ``agentenv_verifiers =
    # agentenv/integrations/verifiers``: verifiers imports a taskset id as a top-level package) has a folder too.
    aliases = {
        name.strip()
        for name, _, folder in (
            line.partition("=") for line in config["options"]["package_dir"].split("\n")
        )
        if folder.strip() and (ROOT / folder.strip() / "__init__.py").exists()
    }
    stale = sorted(listed - on_disk - aliases)
    assert not stale, f"setup.cfg lists packages that have no folder: {stale}"


def test_every_shipped_family_is_declared_as_an_entry_point() -> None:
    """Each envs/<family>/ is a family the registry finds through the package's entry points."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    declared = {
        line.split("=")[0].strip()
        for line in config["options.entry_points"]["agentenv.families"].split("\n")
        if line
    }
    folders = {p.parent.name for p in (ROOT / "envs").glob("*/__init__.py")}
    assert folders == declared
