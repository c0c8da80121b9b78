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
:class:`~agentenv.envs.media_search.dialogue.scripted_user.ScriptedUser`;
scripted assistants: :mod:`~agentenv.envs.media_search.dialogue.scripted_assistant`.

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

## Constructors (PettingZoo's names)
``env(**kwargs)``: the AEC env inside PettingZoo's ``OrderEnforcingWrapper``
(as PettingZoo's own ``env()``); ``raw_env(**kwargs)``: the bare
:class:`MediaConciergeEnv` (same as ``agentenv.multiagent.make(ENV_ID)``);
``parallel_env(**kwargs)``: the turn-based Parallel version. ``kwargs``
override the registered ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from agentenv.core import Task
from agentenv.corpora.media.catalog import load_catalog
from agentenv.engine.env_options import bool_option
from agentenv.engine.parsing import Answer
from agentenv.engine.tools import ToolRegistry
from agentenv.envs.media_search.dialogue.concierge_rows import CONCIERGE_KINDS, concierge_questions
from agentenv.envs.media_search.dialogue.film_requests import (
    FIELD_NAMES,
    Request,
    choose_held_back,
    describe,
    fields_asked,
    join_and,
    request_of,
)
from agentenv.envs.media_search.dialogue.scripted_assistant import (
    AnswerAtOnceAssistant,
    AskingAssistant,
    FieldProbe,
)
from agentenv.envs.media_search.dialogue.scripted_user import ScriptedUser
from agentenv.envs.media_search.dialogue.user_claims import check_user_message, field_of, vocabulary
from agentenv.envs.media_search.grading.answer_catalog import answer_catalog
from agentenv.envs.media_search.grading.grade import read_answer
from agentenv.envs.media_search.questions.record import Question
from agentenv.envs.media_search.tasks.question_tasks import (
    ANSWER_RULES,
    QuestionTasks,
    question_task_from_dict,
    split_questions,
)
from agentenv.envs.media_search.tools.film_tools import catalog_retriever, make_media_tools
from agentenv.multiagent.base import DialogueEnv, Judgment
from agentenv.multiagent.dialogue_state import Dialogue
from agentenv.multiagent.parallel import TurnBasedParallel
from agentenv.multiagent.policy_helpers import PolicyLike
from agentenv.multiagent.registry import make as _make
from agentenv.retrieval.base import Retriever

KINDS = CONCIERGE_KINDS
"""The question kinds whose gold plan is one structured filter, hence a request with fields."""


@dataclass
class Session:
    """One dialogue's state (the env's episode context): the request, what is held back, what was asked."""

    question: Question
    request: Request
    held: tuple[str, ...]
    """Request fields the user holds back until asked."""
    private: dict[str, Any]
    """The request and the opening, structured, for scripted users (``info["private"]``)."""
    asked: tuple[str, ...] = ()
    """Fields the assistant's last message asked about."""
    asked_so_far: list[str] = field(default_factory=list)
    revealed: set[str] = field(default_factory=set)
    n_asked: int = 0


class MediaConciergeEnv(DialogueEnv):
    """Assistant and user on the MediaSearch constraint/superlative questions; see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human"],
        "name": "MediaConcierge-v0",
        "is_parallelizable": False,
    }
    lead, other, first = "assistant", "user", "user"

    def __init__(
        self,
        *,
        split: str = "train",
        kinds: tuple[str, ...] = KINDS,
        retriever: str | Retriever = "bm25",
        max_turns: int = 10,
        reward: Any = None,
        tools_in_prompt: bool = False,
        **kwargs: Any,
    ) -> None:
        self.tools_in_prompt = bool_option("tools_in_prompt", tools_in_prompt)
        if not kinds or not set(kinds) <= set(KINDS):
            raise ValueError(f"kinds must be a non-empty subset of {KINDS}, got {kinds!r}")
        self.catalog = load_catalog()
        self.answers = answer_catalog().load()  # built before any step: no step pays for it
        questions = split_questions(split)
        tools = ToolRegistry(
            make_media_tools(self.catalog, catalog_retriever(self.catalog, retriever))
        )
        self.vocabulary = vocabulary(self.catalog)
        # Tasks made on first access (an id hash each): making all 8,190 of train was a third of a warm make.
        tasks = QuestionTasks(concierge_questions(questions, kinds), split)
        super().__init__(tasks, tools, split=split, max_turns=max_turns, reward=reward, **kwargs)
        self.metadata = {**type(self).metadata}

    # ------------------------------------------------------------------ hooks
    def _lead_system(self) -> str:
        lines = [
            "You help a user find one film in a film catalog (1940-2014). The user's first message may leave "
            "details out: ask them with <say>…</say> (one message per turn; their reply is the next message).",
            'Call a tool with <tool_call>{"name": TOOL, "arguments": {...}}</tool_call>; several calls in one '
            "turn are allowed. " + self.tools.prompt_text(self.tools_in_prompt),
        ]
        lines.append(f"You have at most {self.max_turns} turns. {ANSWER_RULES}")
        return "\n".join(lines)

    def _lead_opening(self, task: Task) -> None:
        return None

    def _start_episode(self, task: Task) -> Session:
        question = task.case if task.family == "media_search" else None
        request = request_of(question) if question is not None else None
        if request is None:
            raise ValueError(
                "options['task'] must be a constraint or superlative MediaSearch Task with a plan"
            )
        held = choose_held_back(request, self.np_random)
        shown = [f for f in request.fields() if f not in held]
        private = {
            "request": request.to_dict(),
            "held_back": list(held),
            "opening": shown,
            "opening_text": describe(request, shown),
        }
        # The opening is what the user is asked to say first: a first message that leaves it out
        # ("Hello.") leaves those fields unanswered, as a reply that ignores a question does.
        return Session(question, request, held, private, asked=tuple(shown))

    def _other_briefing(self, task: Task, context: Session) -> str:
        request = context.request
        held = join_and(tuple(f"the {FIELD_NAMES[f]}" for f in context.held)) or "nothing"
        return "\n".join(
            [
                "You are a user of a film-search assistant. You want one film; you do not know its title, and "
                "you never name or guess one.",
                f"Your full request: {describe(request, request.fields())}",
                f'Start with only: "{context.private["opening_text"]}"',
                f"Hold back until the assistant asks about it: {held}.",
                "Answer the assistant's questions truthfully; give a held-back detail only when asked about it; "
                'say "I don\'t mind about the …" for anything your request does not constrain. '
                "Reply as <say>…</say>.",
            ]
        )

    def _other_private(self, context: Session) -> dict[str, Any]:
        return context.private

    def _heard(self, text: str, context: Session) -> int:
        context.asked = fields_asked(text)
        context.asked_so_far.extend(f for f in context.asked if f not in context.asked_so_far)
        context.n_asked += len(context.asked)
        return len(context.asked)

    def _judge(self, text: str | None, context: Session) -> Judgment:
        if text is None:
            return Judgment({"claims": 0, "unanswered": len(context.asked)})
        request = context.request
        check = check_user_message(
            self.vocabulary,
            text,
            request,
            context.question,
            context.asked,
            context.asked_so_far,
            context.held,
        )
        true_fields = {field_of(c, request) for c in check.claims if c not in check.false_claims}
        context.revealed |= true_fields & set(context.held) & set(context.asked_so_far)
        counts = {
            "claims": len(check.claims),
            "false_claims": len(check.false_claims),
            "evasions": 0,
            "unanswered": len(check.unanswered),
            "leaks": int(check.leak),
            "volunteered": len(check.volunteered),
        }
        return Judgment(counts, check.claims)

    def _grade(self, task: Task, answer: Answer | None, dialogue: Dialogue) -> dict[str, float]:
        session: Session = dialogue.context
        correct = False
        if answer is not None:
            reading = read_answer(answer.text, task.case, self.answers)
            dialogue.answer_feedback, correct = reading.feedback, reading.correct
        return {
            "accuracy": float(correct),
            "questions_asked": float(session.n_asked),
            "held_back": float(len(session.held)),
            "revealed": float(len(session.revealed)),
        }

    def _graded_components(self) -> frozenset[str]:
        return frozenset({"accuracy", "questions_asked", "held_back", "revealed"})

    def _task_from_dict(self, data: Mapping[str, Any]) -> Task:
        return question_task_from_dict(data)

    def default_policy(self, agent: str) -> PolicyLike:
        if agent != self.other:
            raise ValueError(f"only the {self.other} has a scripted default policy, not {agent!r}")
        return ScriptedUser()

    def scripted_leads(self) -> dict[str, PolicyLike]:
        return {
            "answer-at-once": AnswerAtOnceAssistant(self.vocabulary),
            "asking": AskingAssistant(self.vocabulary),
        }

    def probe_policy(self, dialogue: int) -> PolicyLike:
        """The field probe, asking about one field per message in an order rotated by ``dialogue``."""
        return FieldProbe(rotate=dialogue)


ENV_ID: str = MediaConciergeEnv.metadata["name"]
"""The registered id of this dialogue."""


def raw_env(**kwargs: Any) -> MediaConciergeEnv:
    """The bare AEC env of ``ENV_ID`` (no wrappers): ``agentenv.multiagent.make(ENV_ID, **kwargs)``."""
    return _make(ENV_ID, **kwargs)


def env(**kwargs: Any) -> OrderEnforcingWrapper:
    """The AEC env of ``ENV_ID`` inside PettingZoo's ``OrderEnforcingWrapper``, as PettingZoo's own ``env()``."""
    return OrderEnforcingWrapper(raw_env(**kwargs))


def parallel_env(**kwargs: Any) -> TurnBasedParallel:
    """The turn-based Parallel version of ``ENV_ID`` (``info["active_agent"]`` names whose action counts)."""
    return TurnBasedParallel(raw_env(**kwargs))
