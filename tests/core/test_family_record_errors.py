"""A family's record is checked when it is made, and what it names fails in one line naming the field.

Why: a new-family walk found a dot for a colon in ``oracle=`` accepted and failing later as
``AttributeError``, a preset named ``strict`` never reached, ``grader_version="2"`` kept, a reward
reading another family's component failing at the first answer as a bare ``KeyError``, an empty
validation split reported by ``play`` as an internal error, and the documented entry point breaking
``gym.make("pkg.family:Id")`` with a circular import. Each is pinned here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import pytest

from agentenv.cli.main import main
from agentenv.engine.actions import answer
from agentenv.errors import UserInputError
from agentenv.families import EnvSpec, Family, register_family, resolve, unregister_family
from agentenv.rewards.config import MissingComponent

TOY_ENV = textwrap.dedent(
    '''
    """A one-task family for tests: its validation split is empty, its grader reports accuracy."""
    from agentenv.core import Task, ToolEnv
    from agentenv.engine.tools import ToolRegistry


    class OneTaskEnv(ToolEnv):
        def __init__(self, *, split="train", **kwargs):
            tasks = [Task(prompt="Say yes.", gold="yes", split=split, family=FAMILY_NAME)]
            super().__init__(tasks if split != "validation" else [], ToolRegistry([]), split=split, **kwargs)

        def _grade(self, task, answer, episode):
            return {"accuracy": float(answer is not None and answer.text == task.gold)}
    '''
)


def _write_family(root: Path, package: str, *, entry_point: bool) -> None:
    """A package ``package`` with ``env.py`` and ``family.py`` (registered on import); with
    ``entry_point``, also the metadata that declares it in the ``agentenv.families`` group."""
    folder = root / package
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "env.py").write_text(f"FAMILY_NAME = {package!r}\n" + TOY_ENV)
    (folder / "family.py").write_text(
        textwrap.dedent(
            f"""
            from agentenv.families import EnvSpec, Family, register_family

            FAMILY = register_family(Family(
                name={package!r},
                envs=(EnvSpec("{package.title()}-v0", "{package}.env:OneTaskEnv", {{}}, "one task"),),
            ))
            """
        )
    )
    if entry_point:
        info = root / f"{package}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text(
            f"[agentenv.families]\n{package} = {package}.family:FAMILY\n"
        )


def _python(code: str, path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(path)}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )


def test_an_installed_family_still_loads_by_its_module_and_its_bare_id(tmp_path: Path) -> None:
    _write_family(tmp_path, "epfam", entry_point=True)
    for code in (
        'import gymnasium as gym; print(gym.make("epfam.family:Epfam-v0").spec.id)',
        "import epfam.family, gymnasium as gym; print(gym.make('Epfam-v0').spec.id)",
        "import agentenv, gymnasium as gym; print(gym.make('Epfam-v0').spec.id)",
    ):
        done = _python(code, tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == "Epfam-v0"
    done = _python(
        "from agentenv.families import families, _REGISTERED_BY as by; families(); print(by['epfam'])",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "entry point epfam = epfam.family:FAMILY"


def test_a_second_record_under_a_taken_name_names_where_the_first_came_from() -> None:
    first = register_family(Family(name="twice_named", envs=()))
    try:
        with pytest.raises(
            UserInputError,
            match=r"'twice_named' is already registered with another record \(from module "
            rf"{__name__}; this one from module {__name__}\)",
        ):
            register_family(Family(name="twice_named", envs=(), docs="another"))
        assert register_family(first) is first  # the same record again: a no-op
    finally:
        unregister_family("twice_named")


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"oracle": "pkg.agents.Oracle"}, "oracle must be a callable or a 'module:attribute'"),
        ({"bm25": "pkg.agents:"}, "bm25 must be"),
        ({"corpora": {"c": "nocolon"}}, r"corpora\['c'\] must be"),
        ({"agents": {"mine": "a b:c"}}, r"agents\['mine'\] must be"),
        (
            {"reward_presets": {"strict": {}}},
            r"reward_presets\['strict'\] has the name of a generic",
        ),
        ({"grader_version": "2"}, "grader_version must be a whole number from 1"),
        ({"grader_version": True}, "grader_version must be a whole number from 1"),
        ({"grader_version": 0}, "grader_version must be a whole number from 1"),
        (
            {"envs": (EnvSpec("KwargsToy-v0", "pkg.env:Env", None),)},  # type: ignore[arg-type]
            "KwargsToy-v0 kwargs must be a dict",
        ),
    ],
)
def test_a_record_field_that_cannot_work_is_refused_when_the_record_is_made(
    fields: dict, named: str
) -> None:
    with pytest.raises(UserInputError, match=named):
        Family(name="bad_fields", **fields)


def test_a_reference_that_does_not_resolve_names_the_field_holding_it() -> None:
    register_family(
        Family(name="dangling_refs", bm25="agentenv.core:NoSuchStrategy", oracle="no_such_pkg:X")
    )
    try:
        with pytest.raises(
            UserInputError,
            match=r"Family 'dangling_refs' bm25 'agentenv.core:NoSuchStrategy': 'agentenv.core' "
            "has no attribute 'NoSuchStrategy'",
        ):
            resolve("agentenv.core:NoSuchStrategy")
        with pytest.raises(UserInputError, match="oracle 'no_such_pkg:X': no module named"):
            resolve("no_such_pkg:X")
    finally:
        unregister_family("dangling_refs")


def test_a_module_missing_one_of_its_own_imports_keeps_its_error(
    tmp_path: Path, monkeypatch
) -> None:
    (tmp_path / "imports_missing.py").write_text("import no_such_dependency_anywhere\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency_anywhere"):
        resolve("imports_missing:thing")


def test_a_bad_family_preset_names_its_field_when_chosen() -> None:
    register_family(
        Family(name="typo_preset", reward_presets={"typo-preset": {"wieghts": {"accuracy": 1}}})
    )
    try:
        with pytest.raises(ValueError, match=r"reward preset 'typo-preset'.*wieghts"):
            gym.make("MediaSearch-v0", reward="typo-preset")
    finally:
        unregister_family("typo_preset")


@pytest.fixture
def toy_family(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    _write_family(tmp_path, "toyfam", entry_point=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "toyfam.family:Toyfam-v0"
    unregister_family("toyfam")
    for name in [m for m in sys.modules if m == "toyfam" or m.startswith("toyfam.")]:
        del sys.modules[name]


def test_a_reward_reading_a_component_an_undeclared_family_lacks_is_a_user_error(
    toy_family: str,
) -> None:
    env = gym.make(toy_family, reward="first-call-credit")  # MediaSearch's preset: reads first_call
    env.reset(seed=0)
    with pytest.raises(MissingComponent) as caught:
        env.step(answer("yes"))
    assert isinstance(caught.value, UserInputError) and isinstance(caught.value, KeyError)
    message = str(caught.value)
    assert message.startswith(
        "OneTaskEnv, reward 'first-call-credit': reward weight on 'first_call'"
    )
    assert "_graded_components()" in message and "check_reward_components()" in message


def test_play_on_an_empty_split_is_a_user_error_naming_split(
    toy_family: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["play", toy_family]) == 2  # play's default split is validation: empty here
    err = capsys.readouterr().err
    assert err.startswith(f"agentenv: error: {toy_family} (split='validation'): no tasks in split")
    assert "--split" in err


def test_an_eval_error_after_the_progress_bar_starts_is_on_a_line_of_its_own(
    toy_family: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code = main(
        [
            "eval",
            toy_family,
            "--agent",
            "oracle",
            "--episodes",
            "1",
            "--out",
            str(out),
            "--split",
            "train",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2, err  # the toy family declares no oracle
    error_lines = [line for line in err.splitlines() if "agentenv: error:" in line]
    assert error_lines and all(line.startswith("agentenv: error:") for line in error_lines), err


def test_the_checker_names_a_grader_that_raises_as_the_grader() -> None:
    from agentenv.checks import EnvCheckError, check_tool_env
    from agentenv.core import Task, ToolEnv
    from agentenv.engine.tools import ToolRegistry

    class IntGraderEnv(ToolEnv):
        def __init__(self) -> None:
            task = Task(prompt="How many?", gold="3", split="test", family="int_grader")
            super().__init__([task], ToolRegistry([]), split="test")

        def _grade(self, task, answer, episode):  # a bug: int() of whatever the agent wrote
            return {"accuracy": float(answer is not None and int(answer.text) == int(task.gold))}

    with pytest.raises(EnvCheckError) as caught:
        check_tool_env(IntGraderEnv())
    message = str(caught.value)
    assert "raised ValueError" in message and "raised in _grade (the family's grader" in message
    assert (
        "test_family_record_errors.py:" in message and "Agent text must never raise" not in message
    )


def test_the_record_checks_know_every_generic_preset_name() -> None:
    from agentenv.families import GENERIC_PRESETS
    from agentenv.rewards.config import PRESETS

    assert tuple(PRESETS) == GENERIC_PRESETS
