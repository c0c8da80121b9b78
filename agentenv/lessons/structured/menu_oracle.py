"""The menu oracle: per task, the shortest sequence of menu actions whose answer the grader accepts.

Why an oracle on the menu and not the text oracle or bm25: behaviour cloning
needs (features, menu action) pairs, and the text agents' actions are often
not menu entries (bm25's calls carry their own arguments and turn plans,
which the menu's templates do not all render; the text oracle answers the
gold text, which no menu entry may render). The menu
oracle acts only through the menu, so everything it demonstrates is
something the policy can do; it is an oracle because it picks the sequence
by its graded outcome, in hindsight.

The search (a documented beam, not every sequence): every ordered prefix of
at most ``max_tools`` distinct tool entries (no entry twice: a repeated call
returns the same text), then each answer entry. Tools are deterministic given
the task, so each distinct call text is run once per task on the text env
(reset to that task, one step) and its output is reused; the menu is replayed
from the prompt on those outputs, which is pure Python. Each distinct answer
text is graded once, as a one-turn episode of the same task. The graded value
is the env's reward for that answer alone, so the oracle targets rewards that
score only the answer (``strict``, ``lenient``); tool costs are not counted.
The chosen sequence is the best graded one, then the shortest, then the first
in menu order. :func:`agentenv.lessons.structured.behaviour_cloning.demonstrate`
then plays it through the real wrapper, which records the features and
checks the reward.

Example:
    >>> from agentenv.lessons.structured import make_structured
    >>> env = make_structured("MediaSearch-SingleTurn-v0", split="train", reward="strict")
    >>> plan = MenuOracle(env).plan(0)
    >>> len(plan.actions), plan.reward in (0.0, 1.0), len(plan.table) == env.menu.size
    (1, True, True)
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from agentenv.lessons.structured.menu import Menu
from agentenv.lessons.structured.wrapper import StructuredEnv


@dataclass(frozen=True)
class Plan:
    """The oracle's sequence for one task, its graded reward, and the reward of every sequence searched."""

    task_index: int
    actions: tuple[int, ...]
    reward: float
    table: Mapping[tuple[int, ...], float]


class MenuOracle:
    """Plans each task of ``env``'s split by searching menu sequences (see the module docstring)."""

    def __init__(self, env: StructuredEnv, max_tools: int = 2) -> None:
        self.env = env
        self.text_env = env.env
        self.max_tools = max(0, min(int(max_tools), env.max_turns - 1))

    def _fresh(self) -> Menu:
        return type(self.env.menu)()

    def plan(self, task_index: int) -> Plan:
        """The best, then shortest, then first menu sequence for task ``task_index``."""
        prompt, _ = self.text_env.reset(options={"index": task_index})
        outputs: dict[str, str] = {}
        grades: dict[str, float] = {}

        def tool_output(text: str) -> str:
            if text not in outputs:
                self.text_env.reset(options={"index": task_index})
                outputs[text] = str(self.text_env.step(text)[0])
            return outputs[text]

        def grade(text: str) -> float:
            if text not in grades:
                self.text_env.reset(options={"index": task_index})
                grades[text] = float(self.text_env.step(text)[1])
            return grades[text]

        start = self._fresh()
        start.reset(prompt, self.env.max_turns)
        kinds = [_fork(start).act(i).kind for i in range(start.size)]
        tools = [i for i, kind in enumerate(kinds) if kind == "tool"]
        answers = [i for i, kind in enumerate(kinds) if kind != "tool"]
        table: dict[tuple[int, ...], float] = {}
        frontier: list[tuple[tuple[int, ...], Menu]] = [((), start)]
        for depth in range(self.max_tools + 1):
            for prefix, menu in frontier:
                for a in answers:
                    table[(*prefix, a)] = grade(_fork(menu).act(a).text)
            if depth == self.max_tools:
                break
            grown = []
            for prefix, menu in frontier:
                for t in tools:
                    if t in prefix:
                        continue
                    child = _fork(menu)
                    child.observe(tool_output(child.act(t).text))
                    grown.append(((*prefix, t), child))
            frontier = grown
        best = min(table, key=lambda seq: (-table[seq], len(seq), seq))
        return Plan(task_index, best, table[best], table)


def _fork(menu: Menu) -> Menu:
    """A copy of a menu's state that acting on does not change the original (containers copied one level down:
    menus assign what they read, and ``act`` only bumps counters)."""
    twin = copy.copy(menu)
    for name, value in vars(twin).items():
        if isinstance(value, (list, dict, set, np.ndarray)):
            setattr(twin, name, value.copy())
    return twin
