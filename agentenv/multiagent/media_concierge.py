"""MediaConcierge-v0: a user with a half-said film request, and an assistant with the catalog tools.

## Task
The constraint and superlative questions of ``MediaSearch-v0`` (same film
catalog and splits), as a conversation. The ``user`` wants one film and knows
its constraints (year or decade, genre, director, cast, runtime bound; for a
superlative also the ordering), but opens with a vague version: on reset the
env draws, with its seeded generator, which constraints are held back (at
least one; a constraint request keeps one in the opening). The ``assistant``
may ask, search, and answer with the film's title at any time.

## Agents
``assistant`` (lead) and ``user`` (simulated side; speaks first, then replies
once to each message of the assistant). Scripted default user:
:class:`~agentenv.multiagent.policies.ScriptedUser`.

## Observations
User: its briefing on reset (the full request, the opening to say, the
held-back constraints), then each message of the assistant. Assistant: the
user's opening, then tool output, the user's reply, or an error message.

## Actions
Assistant: ``<say>…</say>``, ``<tool_call>`` blocks (``search``,
``filter_titles``, ``get_title``, ``find_person``) or ``<answer>…</answer>``;
``max_turns`` (10) in all. User: ``<say>…</say>``.

## Rewards
Assistant: ``accuracy`` (the MediaSearch grader) plus ``format``,
``tool_calls``, ``turns``, ``messages``, ``questions_asked`` (fields asked
about), ``held_back``, ``revealed``, ``latency_ms`` (2 s per field asked),
weighted by ``reward`` (``strict`` by default; e.g. ``"efficient"`` charges
tool calls and turns). User: 1.0 per faithful message (every stated
constraint true, every asked field answered, no held-back field given
unasked, no title named), else 0.0.
"""

from __future__ import annotations

from typing import Any, ClassVar

from agentenv.core import Task
from agentenv.envs.media_search.env import ANSWER_RULES, MediaSearchEnv, question_task
from agentenv.envs.media_search.grading import grade_answer
from agentenv.envs.media_search.questions import load_questions
from agentenv.multiagent.base import DialogueEnv, Judgment
from agentenv.multiagent.media_claims import check_user_message, field_of, vocabulary
from agentenv.multiagent.media_requests import (
    FIELD_NAMES,
    Request,
    choose_held_back,
    describe,
    fields_asked,
    join_and,
    request_of,
)
from agentenv.parsing import Answer

KINDS = ("constraint", "superlative")
"""The question kinds whose gold plan is one structured filter, hence a request with fields."""


class MediaConciergeEnv(DialogueEnv):
    """Assistant and user on the MediaSearch constraint/superlative questions; see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human"], "name": "MediaConcierge-v0", "is_parallelizable": False,
    }
    lead, other, first = "assistant", "user", "user"

    def __init__(
        self,
        *,
        split: str = "test",
        kinds: tuple[str, ...] = KINDS,
        retriever: Any = "bm25",
        max_turns: int = 10,
        reward: Any = None,
        **kwargs: Any,
    ) -> None:
        if not kinds or not set(kinds) <= set(KINDS):
            raise ValueError(f"kinds must be a non-empty subset of {KINDS}, got {kinds!r}")
        single = MediaSearchEnv(mode="multi_turn", split=split, retriever=retriever)
        self.catalog = single.catalog
        self.vocabulary = vocabulary(self.catalog)
        tasks = [question_task(q, split) for q in load_questions(split) if q.kind in kinds and request_of(q)]
        super().__init__(tasks, single.tools, split=split, max_turns=max_turns, reward=reward, **kwargs)
        self.metadata = {**type(self).metadata}
        self._request: Request | None = None
        self._held: tuple[str, ...] = ()
        self._asked: tuple[str, ...] = ()
        self._asked_so_far: list[str] = []
        self._revealed: set[str] = set()
        self._n_asked = 0
        self._private: dict[str, Any] = {}

    # ------------------------------------------------------------------ hooks
    def _lead_system(self) -> str:
        lines = [
            "You help a user find one film in a film catalog (1940-2014). The user's first message may leave "
            "details out: ask them with <say>…</say> (one message per turn; their reply is the next message).",
            'Call a tool with <tool_call>{"name": TOOL, "arguments": {...}}</tool_call>; several calls in one '
            "turn are allowed. Tools:",
        ]
        lines += [f"- {self.tools[n].signature()}: {self.tools[n].description}" for n in self.tools.names]
        lines.append(f"You have at most {self.max_turns} turns. {ANSWER_RULES}")
        return "\n".join(lines)

    def _lead_opening(self, task: Task) -> None:
        return None

    def _start(self, task: Task) -> None:
        question = task.case if task.family == "media_search" else None
        request = request_of(question) if question is not None else None
        if request is None:
            raise ValueError("options['task'] must be a constraint or superlative MediaSearch Task with a plan")
        self._request = request
        self._held = choose_held_back(request, self.np_random)
        self._asked, self._asked_so_far, self._revealed, self._n_asked = (), [], set(), 0
        shown = [f for f in request.fields() if f not in self._held]
        self._private = {
            "request": request.to_dict(), "held_back": list(self._held), "opening": shown,
            "opening_text": describe(request, shown),
        }

    def _other_briefing(self, task: Task) -> str:
        request = self._request
        held = join_and(tuple(f"the {FIELD_NAMES[f]}" for f in self._held)) or "nothing"
        return "\n".join([
            "You are a user of a film-search assistant. You want one film; you do not know its title, and "
            "you never name or guess one.",
            f"Your full request: {describe(request, request.fields())}",
            f"Start with only: \"{self._private['opening_text']}\"",
            f"Hold back until the assistant asks about it: {held}.",
            "Answer the assistant's questions truthfully; give a held-back detail only when asked about it; "
            "say \"I don't mind about the …\" for anything your request does not constrain. "
            "Reply as <say>…</say>.",
        ])

    def _other_private(self, task: Task) -> dict[str, Any]:
        return self._private

    def _heard(self, text: str) -> int:
        self._asked = fields_asked(text)
        self._asked_so_far.extend(f for f in self._asked if f not in self._asked_so_far)
        self._n_asked += len(self._asked)
        return len(self._asked)

    def _judge(self, text: str | None) -> Judgment:
        if text is None:
            return Judgment({"claims": 0, "unanswered": len(self._asked)})
        question = self.task.case
        check = check_user_message(self.vocabulary, text, self._request, question, self._asked,
                                   self._asked_so_far, self._held)
        true_fields = {field_of(c, self._request) for c in check.claims if c not in check.false_claims}
        self._revealed |= true_fields & set(self._held) & set(self._asked_so_far)
        counts = {
            "claims": len(check.claims), "false_claims": len(check.false_claims), "evasions": 0,
            "unanswered": len(check.unanswered), "leaks": int(check.leak), "volunteered": len(check.volunteered),
        }
        return Judgment(counts, check.claims)

    def _grade(self, task: Task, answer: Answer | None) -> dict[str, float]:
        correct = answer is not None and grade_answer(answer.text, task.case)
        return {"accuracy": float(correct), "questions_asked": float(self._n_asked),
                "held_back": float(len(self._held)), "revealed": float(len(self._revealed))}

    def default_policy(self, agent: str) -> Any:
        if agent != self.other:
            raise ValueError(f"only the {self.other} has a scripted default policy, not {agent!r}")
        from agentenv.multiagent.policies import ScriptedUser

        return ScriptedUser()
