"""The package's structure rules, read from the source: the folder tree is the layer diagram.

Why a test: the tree only stays a picture of the architecture if something fails when it drifts.
Generic code (everything under ``agentenv/``) reaches families only through the registry
(:mod:`agentenv.families`); the command line (``agentenv/cli/``) is imported by nothing else; the
base layers (the contract, the engine, rewards, storage) import no layer above them; folders stay
small enough to read; and no private name crosses a file. Every import statement, at module level
or inside a function, and every ``importlib.import_module("…")`` / ``__import__("…")`` with a
literal name is checked.

Rules (source folder -> the packages it must never import):

* ``agentenv/``  -> ``agentenv.envs``, ``agentenv.corpora``, ``agentenv.baselines``
* ``envs/``      -> ``agentenv.baselines``
* ``corpora/``   -> ``agentenv.envs``, ``agentenv.baselines``
* ``baselines/`` may import anything but the command line.
* nothing outside ``agentenv/cli/`` imports ``agentenv.cli``.
* ``core``, ``families``, ``errors``, ``registration``, ``engine/``, ``rewards/``, ``storage/``
  import none of the layers built on them (BASE_MAY_NOT_IMPORT).

Sizes: ``agentenv/`` holds at most 8 modules at its root; no level of a family folder or of
``corpora/`` holds more than 12.
"""

from __future__ import annotations

import ast
import configparser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: source folder -> (its package name, packages it must not import)
RULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "agentenv": (
        "agentenv",
        ("agentenv.envs", "agentenv.corpora", "agentenv.baselines"),
    ),
    "envs": ("agentenv.envs", ("agentenv.baselines", "agentenv.cli")),
    "corpora": (
        "agentenv.corpora",
        ("agentenv.envs", "agentenv.baselines", "agentenv.cli"),
    ),
    "baselines": ("agentenv.baselines", ("agentenv.cli",)),
}

ROOT_MODULES_MAX = 8
"""Modules at the root of ``agentenv/`` (``__init__`` included): the public index and the contract."""
LEVEL_MODULES_MAX = 12
"""Modules at one level of a family folder or of ``corpora/`` (``__init__`` and ``conftest`` aside)."""

BASE = (
    "agentenv.core",
    "agentenv.families",
    "agentenv.errors",
    "agentenv.registration",
    "agentenv.engine",
    "agentenv.rewards",
    "agentenv.storage",
)
"""The layers every other one builds on."""
BASE_MAY_NOT_IMPORT = (
    "agentenv.cli",
    "agentenv.evaluation",
    "agentenv.integrations",
    "agentenv.lessons",
    "agentenv.play",
    "agentenv.data",
    "agentenv.judge",
    "agentenv.checks",
    "agentenv.multiagent",
    "agentenv.tokens",
)
"""What the base layers must never import, lazily or not: everything built on them."""


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


def sources(folder: str) -> list[tuple[Path, str]]:
    """``(path, module name)`` of every source file under a mapped folder (tests aside)."""
    return [
        (path, module_name(path, folder))
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "tests" not in path.relative_to(ROOT / folder).parts
    ]


def test_nothing_outside_the_command_line_imports_it() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for folder in RULES
        for path, module in sources(folder)
        if not module.startswith("agentenv.cli")
        for line, target in imported_modules(
            path.read_text(encoding="utf-8"), module, path.name == "__init__.py"
        )
        if target == "agentenv.cli" or target.startswith("agentenv.cli.")
    ]
    assert not found, (
        "agentenv/cli/ is the top of the tree; move what is shared out of it:\n" + "\n".join(found)
    )


def test_the_base_layers_import_nothing_built_on_them() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for path, module in sources("agentenv")
        if any(module == b or module.startswith(b + ".") for b in BASE)
        for line, target in imported_modules(
            path.read_text(encoding="utf-8"), module, path.name == "__init__.py"
        )
        if any(target == f or target.startswith(f + ".") for f in BASE_MAY_NOT_IMPORT)
    ]
    assert not found, "a base layer imports a layer built on it:\n" + "\n".join(found)


def test_the_root_of_agentenv_holds_at_most_8_modules() -> None:
    modules = sorted(p.name for p in (ROOT / "agentenv").glob("*.py") if p.name != "conftest.py")
    assert len(modules) <= ROOT_MODULES_MAX, (
        f"agentenv/ holds {len(modules)} modules at its root: {modules}; put new ones in the layer "
        "they belong to (engine/, rewards/, storage/, …)"
    )


@pytest.mark.parametrize("folder", ["envs", "corpora"])
def test_no_level_of_a_family_or_corpora_holds_more_than_12_modules(
    folder: str,
) -> None:
    crowded = {}
    for level in sorted({p.parent for p in (ROOT / folder).rglob("*.py")}):
        modules = [
            p.name for p in level.glob("*.py") if p.name not in ("__init__.py", "conftest.py")
        ]
        if len(modules) > LEVEL_MODULES_MAX:
            crowded[str(level.relative_to(ROOT))] = len(modules)
    assert not crowded, f"split these folders into sub-packages by purpose: {crowded}"


def test_no_private_name_is_imported_from_another_file() -> None:
    found = []
    for folder in RULES:
        for path, _ in sources(folder):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agentenv"):
                    found += [
                        f"{path.relative_to(ROOT)}:{node.lineno} {node.module}.{a.name}"
                        for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")
                    ]
    assert not found, "make these public names of a module with that purpose:\n" + "\n".join(found)


def test_the_top_level_folders_are_the_products() -> None:
    allowed = {
        "agentenv",
        "envs",
        "corpora",
        "baselines",
        "tests",
        "docs",
        "benchmarks",
        "examples",
    }
    tracked = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    ignored = {"build", "dist", "results"} | {p for p in tracked if p.endswith(".egg-info")}
    assert tracked - ignored <= allowed, sorted(tracked - ignored - allowed)


def import_graph() -> dict[str, set[str]]:
    """module -> the package modules it imports, lazily or not (``TYPE_CHECKING`` and function bodies count).

    ``from pkg import name`` is an edge to ``pkg`` (its ``__init__`` runs) and to ``pkg.name`` when
    that is a module.
    """
    files = {module: path for folder in RULES for path, module in sources(folder)}
    return {
        module: {
            target
            for _, target in imported_modules(
                path.read_text(encoding="utf-8"), module, path.name == "__init__.py"
            )
            if target in files and target != module
        }
        for module, path in files.items()
    }


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative).

    Example:
        >>> import_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
        [['a', 'b', 'c']]
        >>> import_circles({"a": {"b"}, "b": set()})
        []
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return sorted(circles)


def test_no_import_circle_lazy_ones_included() -> None:
    """No two modules import each other, even through a function body, ``TYPE_CHECKING`` or a package ``__init__``.

    Why: a circle only works in the import order someone happened to test; a lazy import inside a
    function hides it until the function runs. Give the shared piece a module of its own instead.
    """
    graph = import_graph()
    circles = import_circles(graph)
    detail = [
        " <-> ".join(circle)
        + "\n"
        + "\n".join(f"    {a} imports {b}" for a in circle for b in sorted(graph[a]) if b in circle)
        for circle in circles
    ]
    assert not circles, f"{len(circles)} import circles:\n" + "\n".join(detail)


def test_the_circle_check_finds_a_lazy_circle() -> None:
    """A circle closed only by a function-level or ``TYPE_CHECKING`` import is still found."""
    sources_ = {
        "agentenv.x.a": "from agentenv.x.b import f",
        "agentenv.x.b": "def f():\n    from agentenv.x.c import g",
        "agentenv.x.c": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from agentenv.x import a",
    }
    graph = {
        module: {t for _, t in imported_modules(text, module) if t in sources_ and t != module}
        for module, text in sources_.items()
    }
    assert import_circles(graph) == [["agentenv.x.a", "agentenv.x.b", "agentenv.x.c"]]
