"""RewardConfig: validation that names the field, presets, files, missing components, limits, shaping."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from agentenv.families import Family, dialogue_specs, env_specs, families
from agentenv.rewards.components import (
    COMPONENTS,
    GENERIC,
    all_components,
    components_table,
    undocumented,
)
from agentenv.rewards.config import PRESETS, RewardConfig, resolve_reward

from .guess_env import GuessEnv

DONE = {"accuracy": 1.0, "format": 1.0, "tool_calls": 4.0, "turns": 5.0, "latency_ms": 120.0}


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        (
            {"turn_cost": -1},
            "field 'turn_cost': Input should be greater than or equal to 0 (got -1)",
        ),
        ({"latency_cost": float("inf")}, "field 'latency_cost': Input should be a finite number"),
        ({"cost_cap": "lots"}, "field 'cost_cap'"),
        (
            {"over_limit": "truncate"},
            "field 'over_limit': Input should be 'zero', 'penalty' or 'allow'",
        ),
        ({"weights": {}}, "field 'weights': no weights"),
        ({"weights": {"accuracy": float("nan")}}, "weight of 'accuracy' must be finite"),
        ({"weights": {" ": 1.0}}, "empty component name"),
        ({"tool_cost": 0.1}, "field 'tool_cost': unknown field; did you mean 'tool_call_cost'?"),
        (
            {"over_limit_penalty": 0.5},
            "over_limit_penalty=0.5 has no effect with over_limit='zero'",
        ),
        ({"preset": 3}, "field 'preset'"),
        ({"preset": "efficient", "turn_cost": -0.1}, "field 'turn_cost'"),
    ],
)
def test_invalid_configs_name_the_field(spec: dict, fragment: str) -> None:
    with pytest.raises(ValueError, match="invalid reward config|preset") as err:
        resolve_reward(spec)
    assert fragment in str(err.value)


def test_constructor_errors_name_the_field() -> None:
    with pytest.raises(ValidationError, match="token_cost"):
        RewardConfig(token_cost=-0.001)


def test_unknown_preset_suggests_the_closest() -> None:
    with pytest.raises(ValueError, match="did you mean 'efficient'"):
        resolve_reward("eficient")
    with pytest.raises(TypeError, match="not int"):
        resolve_reward(3)  # type: ignore[arg-type]


def test_config_is_frozen() -> None:
    with pytest.raises(ValidationError):
        PRESETS["strict"].turn_cost = 1.0  # type: ignore[misc]


# --------------------------------------------------------------------- presets
def test_presets() -> None:
    strict, lenient, efficient = (PRESETS[n] for n in ("strict", "lenient", "efficient"))
    assert resolve_reward(None) is strict and resolve_reward("lenient") is lenient
    assert (
        strict.weights == {"accuracy": 1.0}
        and strict.over_limit == "zero"
        and strict.cost(DONE) == 0.0
    )
    assert lenient.over_limit == "allow"
    differ = {k for k, v in efficient.model_dump().items() if strict.model_dump()[k] != v}
    assert differ == {"name", "tool_call_cost", "turn_cost", "cost_cap"}, (
        "efficient = strict + tool and turn cost"
    )
    assert efficient.combine(DONE) == pytest.approx(1.0 - 4 * 0.05 - 5 * 0.02)


def test_dict_from_preset_is_renamed_and_kept() -> None:
    cfg = resolve_reward({"preset": "efficient", "latency_cost": 0.001})
    assert (cfg.name, cfg.tool_call_cost, cfg.latency_cost) == ("efficient+custom", 0.05, 0.001)
    assert resolve_reward({"preset": "efficient"}).name == "efficient"
    assert resolve_reward({"preset": "strict", "name": "mine", "turn_cost": 0.1}).name == "mine"


def test_env_accepts_every_spec_form(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"preset": "efficient", "turn_cost": 0.5}))
    for spec, name in [
        ("efficient", "efficient"),
        ({"turn_cost": 0.1}, "custom"),
        (path, "efficient+custom"),
        (str(path), "efficient+custom"),
        (PRESETS["lenient"], "lenient"),
    ]:
        assert GuessEnv(reward=spec).reward_config.name == name


# ----------------------------------------------------------------------- files
def test_json_and_yaml_files(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(
        '{"weights": {"accuracy": 1.0, "format": 0.1}, "latency_cost": 0.002}'
    )
    (tmp_path / "b.yaml").write_text("preset: efficient\ncost_cap: 0.3\n")
    (tmp_path / "c.yml").write_text("over_limit: penalty\nover_limit_penalty: 0.5\n")
    a, b, c = (resolve_reward(tmp_path / n) for n in ("a.json", "b.yaml", "c.yml"))
    assert a.weights == {"accuracy": 1.0, "format": 0.1} and a.latency_cost == 0.002
    assert (b.name, b.cost_cap, b.tool_call_cost) == ("efficient+custom", 0.3, 0.05)
    assert (c.over_limit, c.over_limit_penalty) == ("penalty", 0.5)


@pytest.mark.parametrize(
    ("name", "text", "error", "fragment"),
    [
        ("bad.json", '{"turn_cost": }', ValueError, "bad.json: invalid JSON at line 1"),
        ("bad.yaml", "a: [", ValueError, "bad.yaml: invalid YAML"),
        ("list.json", "[1, 2]", ValueError, "must hold a mapping of fields, got list"),
        (
            "field.yaml",
            "turn_cost: -2\n",
            ValueError,
            "field.yaml: invalid reward config: field 'turn_cost'",
        ),
        ("typo.json", '{"latency": 1}', ValueError, "did you mean 'latency_cost'"),
    ],
)
def test_bad_files_name_the_file(
    tmp_path: Path, name: str, text: str, error: type, fragment: str
) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(error) as err:
        resolve_reward(tmp_path / name)
    assert fragment in str(err.value)


def test_missing_file_and_missing_pyyaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(FileNotFoundError, match="nope.json does not exist"):
        resolve_reward(str(tmp_path / "nope.json"))
    (tmp_path / "r.yaml").write_text("preset: strict\n")
    monkeypatch.setitem(sys.modules, "yaml", None)
    with pytest.raises(
        ImportError, match="needs PyYAML: pip install pyyaml, or write the config as JSON"
    ):
        resolve_reward(tmp_path / "r.yaml")


# ---------------------------------------------------- missing components raise
def test_weighted_missing_component_raises_with_context() -> None:
    cfg = RewardConfig(weights={"accuracy": 1.0, "format": 0.2})
    with pytest.raises(KeyError) as err:
        cfg.combine({"accuracy": 1.0, "formats": 1.0})
    message = str(err.value)
    assert (
        "'format'" in message
        and "['accuracy', 'formats']" in message
        and "did you mean 'formats'" in message
    )
    assert (
        RewardConfig(weights={"accuracy": 1.0, "format": 0.0}).combine({"accuracy": 1.0}) == 1.0
    ), "0 = log only"


@pytest.mark.parametrize(
    ("field", "key"),
    [
        ("latency_cost", "latency_ms"),
        ("token_cost", "tokens"),
        ("tool_call_cost", "tool_calls"),
        ("turn_cost", "turns"),
    ],
)
def test_charged_missing_component_raises(field: str, key: str) -> None:
    cfg = RewardConfig(**{field: 0.01})
    with pytest.raises(KeyError, match=f"{field}=0.01 charges the '{key}' component"):
        cfg.combine({"accuracy": 1.0})
    assert cfg.combine({"accuracy": 1.0, key: 10.0}) == pytest.approx(0.9)


def test_every_core_component_is_documented() -> None:
    env = GuessEnv()
    env.reset(seed=0, options={"index": 0})
    *_, info = env.step("<answer>red</answer>")
    assert "hit@3" in info["reward_components"]
    assert undocumented(info["reward_components"], COMPONENTS) == []  # hit@3 is documented as hit@K


def test_the_component_table_is_written_once() -> None:
    """The dict and the docstring table are generated from the one tuple of rows."""
    import agentenv.rewards.components as module

    assert COMPONENTS == {c.name: c.meaning for c in GENERIC} and len(COMPONENTS) == len(GENERIC)
    table = components_table(())
    assert all(f"``{c.name}``" in table and c.meaning in table for c in GENERIC)
    assert table in (module.__doc__ or "")
    assert undocumented(["hit@10", "hit@K"], COMPONENTS) == [] and undocumented(
        ["hit@", "hit@x"], COMPONENTS
    ) == ["hit@", "hit@x"]


def test_family_components_are_merged() -> None:
    merged = all_components()
    for family in families():
        for name, meaning in family.components.items():
            assert name in merged and (
                meaning in merged[name] or merged[name] == COMPONENTS.get(name)
            ), name
    assert set(COMPONENTS) <= set(merged)
    toy = Family(
        name="toy_components", components={"questions_asked": "toy questions", "bananas": "eaten"}
    )
    other = Family(name="other_components", components={"questions_asked": "other questions"})
    merged = all_components([toy, other])
    assert merged["bananas"] == "eaten"
    assert (
        merged["questions_asked"]
        == "toy_components: toy questions; other_components: other questions"
    )
    assert "``bananas``" in components_table([toy])


_SINGLE_IDS = [s.id for s in env_specs()]
_DIALOGUE_IDS = [s.id for s in dialogue_specs()]


def _single_agent_components(env_id: str) -> set[str]:
    """Component names at the end of an answered and of a truncated episode."""
    import gymnasium as gym

    env = gym.make(env_id)
    names: set[str] = set()
    for action in ("<answer>I do not know.</answer>", "no action here"):
        env.reset(seed=0)
        done = False
        while not done:
            *_, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        names |= set(info["reward_components"])
    return names


def _dialogue_components(env_id: str) -> set[str]:
    """Component names every agent reports at the end of an answered and of a truncated dialogue."""
    from agentenv.multiagent import make

    env = make(env_id)
    names: set[str] = set()
    for lead_action in ("<answer>I do not know.</answer>", "no action here"):
        env.reset(seed=0)
        for agent in env.agent_iter(100):
            *_, terminated, truncated, info = env.last()
            if terminated or truncated:
                names |= set(info["reward_components"])
                env.step(None)
            else:
                env.step(
                    lead_action if agent == env.possible_agents[0] else "<say>I am not sure.</say>"
                )
    return names


@pytest.mark.parametrize("env_id", _SINGLE_IDS + _DIALOGUE_IDS)
def test_every_component_a_registered_env_reports_is_documented(env_id: str) -> None:
    names = (
        _single_agent_components(env_id) if env_id in _SINGLE_IDS else _dialogue_components(env_id)
    )
    assert {"accuracy", "format"} <= names
    assert undocumented(names) == [], (
        f"{env_id} reports undocumented components: add them to agentenv.rewards.components.GENERIC or to the "
        "family's Family.components"
    )


# -------------------------------------------------------------------- costs
def test_latency_and_token_costs_and_cap() -> None:
    cfg = RewardConfig(latency_cost=0.001, token_cost=0.0001)
    assert cfg.combine({**DONE, "tokens": 1000}) == pytest.approx(1.0 - 0.12 - 0.1)
    capped = RewardConfig(tool_call_cost=1.0, latency_cost=1.0, cost_cap=0.25)
    assert capped.cost(DONE) == 0.25 and capped.combine(DONE) == 0.75


# ---------------------------------------------------------------- over limit
OVER = {"accuracy": 1.0, "hit@any": 1.0, "over_limit": 1.0, "tool_calls": 1.0, "turns": 2.0}
WRONG = {"accuracy": 0.0, "hit@any": 0.0, "over_limit": 0.0, "tool_calls": 1.0, "turns": 2.0}


@pytest.mark.parametrize(
    ("treatment", "expected"),
    [
        ({"over_limit": "zero"}, 0.0),
        ({"over_limit": "penalty"}, 0.0),
        ({"over_limit": "penalty", "over_limit_penalty": 0.25}, 0.75),
        ({"over_limit": "allow"}, 1.0),
    ],
)
def test_over_limit_treatments(treatment: dict, expected: float) -> None:
    assert resolve_reward(treatment).combine(OVER) == expected


def test_over_limit_is_never_cheaper_than_a_wrong_answer() -> None:
    cfg = resolve_reward({"preset": "efficient"})
    assert cfg.combine(OVER) == cfg.combine(WRONG) == pytest.approx(-0.09)


def test_allow_needs_hit_at_any() -> None:
    with pytest.raises(
        KeyError, match="over_limit='allow' scores an over-limit answer on 'hit@any'"
    ):
        PRESETS["lenient"].combine({"accuracy": 1.0, "over_limit": 1.0})
    assert PRESETS["lenient"].combine({"accuracy": 0.0, "over_limit": 0.0}) == 0.0, (
        "within the limit: accuracy"
    )


# --------------------------------------------------------------------- shaping
def test_shaping_pays_nothing_on_a_free_step() -> None:
    reward, paid = (
        PRESETS["efficient"]
        .model_copy(update={"shaping": True})
        .step_reward(0.5, {"tool_calls": 20})
    )
    assert (str(reward), paid) == ("0.0", 0.5), "capped: nothing more to pay, and no -0.0"


def test_shaping_off_pays_everything_at_the_end() -> None:
    cfg = PRESETS["efficient"]
    assert cfg.step_reward(0.0, {"tool_calls": 3, "turns": 1}) == (0.0, 0.0)
    assert cfg.step_reward(0.0, {}, DONE) == (cfg.combine(DONE), 0.0)


@given(
    steps=st.lists(st.tuples(st.integers(0, 4), st.floats(0, 500)), min_size=1, max_size=10),
    accuracy=st.sampled_from([0.0, 1.0]),
    cap=st.one_of(st.none(), st.floats(0, 1)),
)
def test_shaping_keeps_the_return(steps: list, accuracy: float, cap: float | None) -> None:
    cfg = RewardConfig(
        tool_call_cost=0.05, turn_cost=0.02, latency_cost=0.001, cost_cap=cap, shaping=True
    )
    paid, total, calls, latency = 0.0, 0.0, 0, 0.0
    for turn, (n, ms) in enumerate(steps[:-1], start=1):
        calls, latency = calls + n, latency + ms
        reward, paid = cfg.step_reward(
            paid, {"tool_calls": calls, "turns": turn, "latency_ms": latency}
        )
        assert reward <= 0.0
        total += reward
    final = {"accuracy": accuracy, "tool_calls": calls, "turns": len(steps), "latency_ms": latency}
    total += cfg.step_reward(paid, {}, final)[0]
    assert total == pytest.approx(cfg.combine(final), abs=1e-9)
    assert total == pytest.approx(
        cfg.model_copy(update={"shaping": False}).combine(final), abs=1e-9
    )


_VALUES = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)


@given(
    weights=st.dictionaries(
        st.sampled_from(["accuracy", "format", "first_call"]), _VALUES, min_size=1
    ),
    rates=st.tuples(*[st.sampled_from([0.0, 0.05, 0.1, 1e-3]) for _ in range(3)]),
    cap=st.one_of(st.none(), st.floats(min_value=0.0, max_value=2.0)),
    over_limit=st.sampled_from(["zero", "penalty", "allow"]),
    values=st.fixed_dictionaries(
        {k: _VALUES for k in ("accuracy", "format", "first_call", "hit@any", "latency_ms")}
        | {k: st.integers(0, 64).map(float) for k in ("tool_calls", "turns")}
    ),
    over=st.sampled_from([None, 0.0, 1.0, 0.0 * -1]),
)
def test_combine_is_score_minus_cost_bit_for_bit(
    weights: dict[str, float],
    rates: tuple[float, float, float],
    cap: float | None,
    over_limit: str,
    values: dict[str, float],
    over: float | None,
) -> None:
    """The one-pass combine (no cost sum when nothing is charged) returns the very float that
    ``round(score - cost, 10)`` gives, for every weight, rate, cap and over-limit treatment."""
    cfg = RewardConfig(
        weights=weights,
        tool_call_cost=rates[0],
        turn_cost=rates[1],
        latency_cost=rates[2],
        cost_cap=cap,
        over_limit=over_limit,
    )
    components = values if over is None else {**values, "over_limit": over}
    reference = round(cfg.score(components) - cfg.cost(components), 10)
    got = cfg.combine(components)
    assert got == reference and str(got) == str(reference)


@pytest.mark.parametrize("field", ["require_think", "shaping"])
@pytest.mark.parametrize("value", ["yes", "off", 1])
def test_switches_are_true_or_false_only(field: str, value: object) -> None:
    """Pydantic's lax mode read "yes" and 1 as true: a typo turned a switch on."""
    with pytest.raises(ValueError, match=f"field '{field}': Input should be a valid boolean"):
        resolve_reward({field: value})
