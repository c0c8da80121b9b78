"""Every trainer adapter gives ``agentenv eval``'s reward, turns and transcript for the same text (and TokenEnv's ids).

Cases are drivers × single-agent ids × scripts (see ``parity/drivers/__init__.py`` for the driver
contract and ``parity/scripts.py`` for the episodes). A driver whose library is not installed is
skipped; the scripts themselves are checked here too, so a script that stopped doing what its name
says (an oracle that no longer scores 1.0) fails rather than passing vacuously.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pytest

from .parity import drivers as drivers_package
from .parity.scripts import SCRIPT_NAMES, SINGLE_AGENT_IDS, hit_deadline, reference, script

DRIVERS: tuple[str, ...] = tuple(
    sorted(m.name for m in pkgutil.iter_modules(drivers_package.__path__))
)


def load_driver(name: str) -> ModuleType:
    module = importlib.import_module(f"{drivers_package.__name__}.{name}")
    pytest.importorskip(module.REQUIRES)
    return module


@pytest.mark.parametrize("name", SCRIPT_NAMES)
@pytest.mark.parametrize("env_id", SINGLE_AGENT_IDS)
def test_scripts_do_what_they_say(env_id: str, name: str) -> None:
    s = script(env_id, name)
    record = reference(env_id, s)
    multi_turn = "SingleTurn" not in env_id
    assert record.turns == (
        len(s.actions) if multi_turn else 1
    )  # every action was played, none left over
    if name == "oracle":
        assert record.reward == 1.0 and record.terminated
    elif name == "wrong_answer":
        assert record.reward == 0.0 and record.terminated
    elif name == "truncation" and multi_turn:
        assert record.truncated and not record.terminated and record.reward == 0.0
    elif multi_turn:  # an invalid call or a multi-call message, then the oracle's remaining turns
        assert record.terminated and record.reward == 1.0
    if multi_turn and name == "multi_call":
        calls = [m for m in record.messages if m["role"] == "assistant"][0]["tool_calls"]
        assert len(calls) >= 2
    if multi_turn and name == "invalid_call":
        assert record.messages[3]["content"].startswith("Error: bad JSON")
    if record.token_ids is not None:
        assert len(record.token_ids) == len(record.loss_mask) and 1 in record.loss_mask


def test_drivers_follow_the_contract() -> None:
    assert DRIVERS, "no driver modules found"
    for name in DRIVERS:
        module = importlib.import_module(f"{drivers_package.__name__}.{name}")
        assert isinstance(module.REQUIRES, str) and callable(module.run), name


@pytest.mark.parametrize("name", SCRIPT_NAMES)
@pytest.mark.parametrize("env_id", SINGLE_AGENT_IDS)
@pytest.mark.parametrize("driver", DRIVERS)
def test_adapter_matches_agentenv_eval(driver: str, env_id: str, name: str) -> None:
    module = load_driver(driver)
    s = script(env_id, name)
    expected = reference(env_id, s)
    got = module.run(env_id, s)
    if hit_deadline(got.messages) or hit_deadline(expected.messages):
        pytest.skip(
            "a tool call ran past its deadline (a busy machine): its output is timing, not the script's"
        )
    assert round(got.reward, 10) == expected.reward
    assert got.turns == expected.turns
    assert got.messages == expected.messages
    if got.token_ids is not None:
        assert expected.token_ids is not None, "the reference needs the tokens extra to compare ids"
        assert got.token_ids == expected.token_ids
        assert got.loss_mask == expected.loss_mask
