"""``agentenv list --family-module MODULE`` takes a dotted module name and names it in every failure.

A probe found: ``""`` gave "ValueError: Empty module name" and ``../x`` a TypeError about a
'package' argument (exit 1, the flag not named), and a module whose import raised RuntimeError
or SyntaxError was not named. Now the name is read by a grammar (identifiers separated by dots)
and any import failure is one line naming the module (exit 2).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentenv.cli.list import check_module_name
from agentenv.cli.main import main
from agentenv.errors import UserInputError

MODULES = {
    "hostile_runtime_mod": "raise RuntimeError('no families today')\n",
    "hostile_syntax_mod": "def broken(:\n    pass\n",
    "hostile_value_mod": "int('x')\n",
    "harmless_family_mod": "VALUE = 1\n",
}


@pytest.fixture
def module_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on ``sys.path`` holding :data:`MODULES`; each is forgotten again afterwards."""
    for name, source in MODULES.items():
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in MODULES:
        sys.modules.pop(name, None)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    "name", ["", "../x", "x/y", "pkg.", ".rel", "a..b", "mod.py/", "1abc", "a-b", "a b", "a\x1bb"]
)
def test_only_a_dotted_name_is_taken(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(["list", "--family-module", name], capsys)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "--family-module" in err and "not a module name" in err
    assert "TypeError" not in err and "Empty module name" not in err


@pytest.mark.parametrize("name", ["capitals", "capitals.family", "_x.y_2", "émigré.mod"])
def test_dotted_names_pass_the_grammar(name: str) -> None:
    assert check_module_name(name) == name


@pytest.mark.parametrize(
    ("module", "said"),
    [
        ("hostile_runtime_mod", "RuntimeError: no families today"),
        ("hostile_syntax_mod", "SyntaxError"),
        ("hostile_value_mod", "ValueError"),
        ("no_such_module_here", "cannot import it"),
    ],
)
def test_an_import_failure_names_the_module(
    module_dir: Path, module: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run(["list", "--family-module", module], capsys)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"--family-module {module}:" in err and said in err, err


def test_a_module_that_imports_is_listed_after(
    module_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["list", "--family-module", "harmless_family_mod"]) == 0
    assert "media_search:" in capsys.readouterr().out


def test_the_grammar_error_is_a_user_error() -> None:
    with pytest.raises(UserInputError, match="not a file path"):
        check_module_name("examples/capitals/family.py")
