"""The fixed-sequence enumeration finds the best macro, shares prefixes, and scores the runner's episodes."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import agentenv  # noqa: F401 - registers the ids
from agentenv.engine.actions import answer, tool_call
from agentenv.evaluation.runner import episode_plan
from agentenv.lessons.structured.fixed_sequences import all_orders, runner_episodes, score_sequences
from agentenv.lessons.structured.menu import Choice, Menu
from agentenv.lessons.structured.wrapper import make_structured


class PlantedMenu(Menu):
    """A menu over MediaSearch-v0 whose one right sequence is planted: the answer is correct only after the
    tool entries ``open`` then ``search`` ran in that order, and entry ``answer gold`` is taken.

    The "gold" answer is read from the env's task by the test (a menu never reads it in the package):
    it is how the test knows which sequence must win.
    """

    name = "planted"
    labels = ("search", "open", "noop tool", "answer gold", "answer wrong")
    feature_names = ("turn_fraction", "last_reply_was_error")
    gold = ""

    def _start(self) -> None:
        self.seen: tuple[int, ...] = ()

    def _render(self, index: int) -> Choice:
        if index < 3:
            return Choice(
                tool_call("search", query=f"planted {index}", k=1), self.labels[index], "tool"
            )
        right = index == 3 and self.seen == (1, 0)
        return Choice(
            answer(self.gold if right else "no such film"), self.labels[index], "answer", 1
        )

    def _read(self, index: int, obs: str) -> None:
        self.seen = (*self.seen, index)

    def _features(self) -> list[float]:
        return []


def test_all_orders_lists_every_ordered_selection() -> None:
    assert all_orders([0, 1, 2], 2) == [
        (),
        (0,),
        (1,),
        (2,),
        (0, 1),
        (0, 2),
        (1, 0),
        (1, 2),
        (2, 0),
        (2, 1),
    ]


@pytest.fixture()
def planted() -> gym.Env:
    env = gym.make("MediaSearch-v0", split="validation", reward="strict")
    env.reset(seed=0, options={"index": 0})
    PlantedMenu.gold = str(env.unwrapped.task.gold["answer"])
    return env


def test_the_enumeration_finds_a_planted_best_sequence(planted: gym.Env) -> None:
    env = planted
    scores = score_sequences(env, PlantedMenu, [(0, 0)], depth=2, full_depth=2)
    best = scores.best()
    assert scores.sequences[best] == (1, 0, 3)
    assert scores.returns[best][0] == 1.0
    # every other sequence scores 0, and each one is listed once
    assert sorted(float(r[0]) for r in scores.returns).count(1.0) == 1
    assert len(set(scores.sequences)) == len(scores.sequences) == len(all_orders([0, 1, 2], 2)) * 2
    # prefixes share their tool calls: 1 + 3 + 6 prefixes after the root, each answer text graded once per node
    assert scores.nodes == 3 + 6
    assert scores.graded <= len(scores.sequences)


def test_the_beam_extends_only_the_best_prefixes(planted: gym.Env) -> None:
    env = planted
    full = score_sequences(env, PlantedMenu, [(0, 0)], depth=3, full_depth=3)
    beamed = score_sequences(env, PlantedMenu, [(0, 0)], depth=3, full_depth=2, beam=1)
    assert (
        len(beamed.sequences) == len(full.sequences) - (len(all_orders([0, 1, 2], 3)) - 10 - 1) * 2
    )
    assert {s[:2] for s in beamed.sequences if len(s) == 4} == {(1, 0)}  # only the best prefix grew
    assert beamed.sequences[beamed.best()] == full.sequences[full.best()] == (1, 0, 3)


def test_scores_match_playing_the_sequence_through_the_wrapper() -> None:
    """The enumeration's return of a sequence on an episode is what the wrapper earns playing it on that episode."""
    from agentenv.envs.rare_disease.structured.menus import DiagnosisToolsMenu

    env = gym.make("RareDiseaseDiagnosis-v0", split="validation", reward="strict")
    episodes = [(5, 2), (6, 7), (7, 11)]
    scores = score_sequences(env, DiagnosisToolsMenu, episodes, depth=2, full_depth=2)
    wrapped = make_structured("RareDiseaseDiagnosis-v0", split="validation", reward="strict")
    labels = list(wrapped.menu.labels)
    for sequence in [
        (1, labels.index("answer top 3")),
        (1, 0, labels.index("answer fused top (limit)")),
        (0, labels.index("answer ranking top (limit)")),
    ]:
        row = scores.returns[scores.sequences.index(sequence)]
        for e, (seed, index) in enumerate(episodes):
            wrapped.reset(seed=seed, options={"index": index})
            for action in sequence:
                _, reward, *_ = wrapped.step(action)
            assert reward == row[e], (sequence, e)


def test_runner_episodes_are_the_evaluation_runners() -> None:
    plan = runner_episodes(50, 4, [3, 4])
    assert plan[:4] == [(3 + i, t) for i, t in enumerate(episode_plan(50, 4, 3))]
    assert plan[4:] == [(4 + i, t) for i, t in enumerate(episode_plan(50, 4, 4))]


def test_hindsight_is_at_least_the_best_sequence() -> None:
    from agentenv.lessons.structured.fixed_sequences import SequenceScores

    s = SequenceScores(
        ("a", "b"),
        [(0,), (1,)],
        [np.array([1.0, 0.0]), np.array([0.0, 1.0])],
        [np.array([1.0, 0.0]), np.array([0.0, 1.0])],
    )
    assert s.hindsight().mean() == 1.0 > float(s.returns[s.best()].mean())
    assert s.best() == 0  # a tie goes to the earlier sequence
