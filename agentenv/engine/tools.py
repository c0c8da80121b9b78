"""Tools: typed functions an agent can call, with schemas, limits and no crashes.

A tool is a function plus a pydantic model of its arguments. The model gives
the OpenAI function schema the agent sees, and validates the arguments before
the call, so a tool body only ever receives well-typed input. Every call runs
under a time limit and an output cap; a :class:`ToolError`, any other
exception, or a timeout becomes an error observation for the agent, never an
exception in the env.

A tool that needs the episode's state (a patient to ask, a user's request)
declares ``takes_context=True``: it is called as ``fn(args, context)`` with
whatever the env's ``_start_episode`` hook returned for the current episode,
so tool bodies hold no reference to the env and no per-episode closure.

Example:
    >>> from pydantic import BaseModel, Field
    >>> class EchoArgs(BaseModel):
    ...     text: str = Field(description="What to echo back.")
    >>> echo = Tool("echo", "Repeat the text.", EchoArgs, lambda a: {"echo": a.text})
    >>> registry = ToolRegistry([echo])
    >>> registry.schemas[0]["function"]["parameters"]["required"]
    ['text']
    >>> registry.execute(echo, EchoArgs(text="hi")).content
    '{"echo": "hi"}'
"""

from __future__ import annotations

import copy
import json
import signal
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from types import UnionType
from typing import Annotated, Any, Literal, NamedTuple, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from agentenv.engine.frozen import freeze
from agentenv.engine.parsing import CallRejected, ParseError, ToolCalls
from agentenv.engine.tool_deadline import WATCHDOG, ToolTimeout

# One encoder for the hot path: json.dumps with keyword arguments builds a new encoder per call.
_JSON = json.JSONEncoder(ensure_ascii=False)
# JSONEncoder.encode still builds a C encoder on every call (about a microsecond); this one is
# built once. Without circular-reference markers, so it is only for acyclic data (see encode_json).
_C_ENCODE = (
    json.encoder.c_make_encoder(  # type: ignore[attr-defined]
        None, _JSON.default, json.encoder.encode_basestring, None, ": ", ", ", False, False, True
    )
    if getattr(json.encoder, "c_make_encoder", None) is not None
    else None
)


def encode_json(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``, byte for byte, at a fraction of its cost.

    For values decoded from JSON (tool-call arguments), which cannot hold a cycle; a
    value json cannot write raises as ``json.dumps`` would.

    Example:
        >>> encode_json({"query": "Amélie", "k": 3, "tags": [1.5, None, True]})
        '{"query": "Amélie", "k": 3, "tags": [1.5, null, true]}'
    """
    if _C_ENCODE is None or type(value) is str:
        return _JSON.encode(value)
    return "".join(_C_ENCODE(value, 0))


_SIGNALS = hasattr(signal, "pthread_kill") and hasattr(signal, "SIGALRM")
DEFAULT_TIMEOUT_S = 5.0
DEFAULT_MAX_OUTPUT_CHARS = 8_000
DEFAULT_MAX_CALLS_PER_ACTION = 32
"""Parallel calls accepted in one action. Without a bound one 32 KB action of short calls
runs hundreds of tools (each under its own time limit), and a single step can take minutes."""
ACTION_WORK_BUDGET = 1_000
"""Work units (:attr:`Tool.work`) the calls of one action may spend together. A unit is one
catalog record read or rendered; 1,000 of them cost a few milliseconds, so with every tool body
bounded per unit an action stays inside the 20 ms step budget whatever its calls ask, while an
ordinary action (a few calls of at most a hundred units each) never meets the bound."""


class ToolError(Exception):
    """An expected tool failure; its message is shown to the agent verbatim."""


class ServiceUnavailable(Exception):
    """A service a tool depends on (e.g. a retrieval server) is down or not answering.

    Why its own type: the agent must learn that the call failed through no
    fault of its request, so the error it reads says so instead of asking for
    a narrower request.
    """


@dataclass(frozen=True)
class Tool:
    """A callable tool: ``fn`` receives a validated ``args_model`` instance.

    ``fn`` returns a ``str`` or anything JSON-serialisable; the registry turns
    it into the observation text. With ``takes_context`` it also receives the
    episode's context: ``fn(args, context)``.
    """

    name: str
    description: str
    args_model: type[BaseModel]
    fn: Callable[[Any], Any]
    timeout_s: float | None = DEFAULT_TIMEOUT_S
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS
    latency_ms: float = 0.0
    """Modelled latency of one call in production (a search service, a database), used by
    the ``latency_ms`` reward component. It is declared, not measured, so rewards stay
    deterministic; the measured wall time is kept in ``ToolResult.wall_ms``."""
    takes_context: bool = False
    """Call ``fn(args, context)`` with the episode's context (see the module docstring)."""
    work: Callable[[Any], int] | None = None
    """An upper bound on a call's work in units (:data:`ACTION_WORK_BUDGET`), from its validated
    arguments, computed before it runs; the calls of one action share the registry's
    ``action_work_budget``, and a call that would pass it is answered with an error instead of
    run. ``None``: the call is not counted (a tool whose cost is constant)."""

    def schema(self) -> dict[str, Any]:
        """The OpenAI function schema, generated from the argument model."""
        parameters = _without_titles(self.args_model.model_json_schema())
        parameters.setdefault("properties", {})
        parameters.setdefault("required", [])
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters,
            },
        }

    def signature(self) -> str:
        """A one-line summary of the arguments, used in error messages, ``help`` and text prompts.

        Types are written as in Python, with a ``Literal``'s allowed values spelled out as
        JSON, and an optional argument shows its default (``= …``), so the line alone says
        what may be sent: ``filter_titles(…, order: "desc" | "asc" = "desc", …)``.
        """
        parts = []
        for name, info in self.args_model.model_fields.items():
            part = f"{name}: {type_text(info.annotation)}"
            if not info.is_required():
                default = info.get_default(call_default_factory=True)
                try:
                    part += f" = {json.dumps(default, ensure_ascii=False)}"
                except (TypeError, ValueError):
                    part += " (optional)"
            parts.append(part)
        return f"{self.name}({', '.join(parts)})"


def type_text(annotation: Any) -> str:
    """A type annotation as a short, readable string: ``str``, ``int | None``, ``list[str]``,
    and a ``Literal``'s values as JSON (``"asc" | "desc"``), so no allowed value is hidden."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return " | ".join(json.dumps(value, ensure_ascii=False) for value in args)
    if origin is Annotated:
        return type_text(args[0])
    if origin in (Union, UnionType):
        return " | ".join(type_text(arg) for arg in args)
    if annotation is type(None):
        return "None"
    if origin is not None:
        name = getattr(origin, "__name__", None) or str(origin).replace("typing.", "")
        return f"{name}[{', '.join(type_text(arg) for arg in args)}]" if args else name
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


def tool(
    args_model: type[BaseModel],
    *,
    name: str | None = None,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
) -> Callable[[Callable[[Any], Any]], Tool]:
    """Decorator: build a :class:`Tool` from a function; its docstring is the description."""

    def wrap(fn: Callable[[Any], Any]) -> Tool:
        doc = (fn.__doc__ or "").strip().split("\n\n")[0]
        return Tool(
            name or fn.__name__, " ".join(doc.split()), args_model, fn, timeout_s, max_output_chars
        )

    return wrap


class ToolResult(NamedTuple):
    """What one call produced: the observation text and whether it succeeded."""

    name: str
    content: str
    ok: bool
    wall_ms: float


class ValidatedCall(NamedTuple):
    """A tool call whose arguments passed validation."""

    tool: Tool
    args: BaseModel
    arguments: dict[str, Any]


def _argument_checker(model: type[BaseModel]) -> Callable[[Any], BaseModel]:
    """``model.model_validate``, or the same check one call shorter.

    Why: ``model_validate`` only forwards to the model's core validator, and that forwarding
    was a tenth of a tool step. A model that overrides ``model_validate`` keeps its own.

        >>> from pydantic import BaseModel
        >>> class Args(BaseModel):
        ...     k: int
        >>> _argument_checker(Args)({"k": "3"})
        Args(k=3)
    """
    if getattr(model.model_validate, "__func__", None) is not BaseModel.model_validate.__func__:
        return model.model_validate

    def check(arguments: Any) -> BaseModel:
        return model.__pydantic_validator__.validate_python(arguments)

    return check


class ToolRegistry:
    """The tools of one env: lookup, schemas, validation and guarded execution."""

    def __init__(
        self,
        tools: Iterable[Tool],
        *,
        max_calls_per_action: int = DEFAULT_MAX_CALLS_PER_ACTION,
        action_work_budget: int = ACTION_WORK_BUDGET,
    ) -> None:
        if max_calls_per_action < 1:
            raise ValueError(f"max_calls_per_action must be at least 1, got {max_calls_per_action}")
        if action_work_budget < 1:
            raise ValueError(f"action_work_budget must be at least 1, got {action_work_budget}")
        self.max_calls_per_action = max_calls_per_action
        self.action_work_budget = action_work_budget
        self._tools: dict[str, Tool] = {}
        for t in tools:
            if t.name in self._tools:
                raise ValueError(f"duplicate tool name {t.name!r}")
            self._tools[t.name] = t
        self._check_args = {t.name: _argument_checker(t.args_model) for t in self._tools.values()}
        self.schemas: list[dict[str, Any]] = [t.schema() for t in self._tools.values()]
        self.info_schemas: list[dict[str, Any]] = freeze(copy.deepcopy(self.schemas))
        """The schemas as ``info["tools"]`` gives them: read-only, so every step shares one list."""
        self._executor: ThreadPoolExecutor | None = None

    def prompt_text(self, in_prompt: bool) -> str:
        """The tools as a system prompt names them.

        ``in_prompt=True``: one line per tool, its signature and description, for
        callers that do not render ``info["tools"]``. ``False``: their names only,
        since a chat template given ``tools=info["tools"]`` renders the JSON
        schemas next to the system message; describing them twice costs tokens.
        """
        if in_prompt:
            return "Tools:\n" + "\n".join(
                f"- {self[n].signature()}: {self[n].description}" for n in self.names
            )
        return f"Tools: {', '.join(self.names)} (their arguments are in the function schemas given with this prompt)."

    @property
    def names(self) -> list[str]:
        """Tool names, in registration order."""
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __getitem__(self, name: str) -> Tool:
        return self._tools[name]

    def __len__(self) -> int:
        return len(self._tools)

    def validate(self, action: ToolCalls) -> list[ValidatedCall] | ParseError:
        """Check every call's tool name and arguments; the first failure explains itself.

        An unknown tool or invalid arguments is a :class:`~agentenv.engine.parsing.CallRejected` (the env
        answers it in a ``tool`` message); too many calls in one action is a plain ``ParseError``.

        Never raises: the arguments are agent text, and a family's validator that fails in an
        unexpected way (not a ``ValidationError``) is still an error observation, not a crash.
        """
        if len(action.calls) > self.max_calls_per_action:
            return ParseError(
                f"{len(action.calls)} tool calls in one action; at most {self.max_calls_per_action} "
                "run per turn: send the rest after reading these results",
                expected="Call at most that many tools per action.",
            )
        validated = []
        for index, call in enumerate(action.calls, start=1):
            t = self._tools.get(call.name)
            if t is None:
                known = ", ".join(self._tools) or "none"
                return CallRejected(
                    f"unknown tool {_clip(call.name)!r} in call {index}; known tools: {known}",
                    expected="Call one of the known tools with its documented arguments.",
                    index=index,
                )
            try:
                args = self._check_args[t.name](call.arguments)
            except ValidationError as exc:
                reason = _explain(exc)
            except Exception as exc:  # noqa: BLE001 - agent input never raises out of the env
                reason = f"{type(exc).__name__}: {_clip(str(exc), 200)}"
            else:
                validated.append(ValidatedCall(t, args, call.arguments))
                continue
            return CallRejected(
                f"invalid arguments for {t.name} in call {index}: {reason}",
                expected=f"Expected {t.signature()}.",
                index=index,
            )
        return validated

    def execute(self, t: Tool, args: BaseModel, context: Any = None) -> ToolResult:
        """Run one call under its time limit and output cap; never raises.

        ``context`` is the episode's context, passed on to a tool that ``takes_context``.
        In the main thread the limit is kept by :mod:`agentenv.engine.tool_deadline`'s watchdog; elsewhere,
        where signals cannot reach, the call runs in a helper thread that is abandoned
        when the limit passes.
        """
        start = time.perf_counter()
        ok = True
        try:
            if t.timeout_s is None:
                result = t.fn(args, context) if t.takes_context else t.fn(args)
            elif _SIGNALS and threading.get_ident() == threading.main_thread().ident:
                if t.takes_context:
                    result = WATCHDOG.run(t.timeout_s, t.fn, args, context)
                else:
                    result = WATCHDOG.run(t.timeout_s, t.fn, args)
            else:
                result = self._run_in_thread(t, args, context)
            content = result if isinstance(result, str) else _JSON.encode(result)
        except ToolError as exc:
            ok, content = False, f"Error: {exc}"
        except ServiceUnavailable as exc:
            ok, content = (
                False,
                (
                    f"Error: {t.name} could not run because a service it needs is unavailable ({str(exc)[:600]}). "
                    "This is not a problem with your request; retry later or answer without it."
                ),
            )
        except ToolTimeout:
            ok, content = (
                False,
                (
                    f"Error: {t.name} did not finish within {t.timeout_s:g} s: the request may be too broad, "
                    "or a service it uses may be slow."
                ),
            )
        except Exception as exc:  # noqa: BLE001 - any tool failure becomes an observation
            ok, content = False, f"Error: {t.name} failed ({type(exc).__name__}): {str(exc)[:300]}"
        if len(content) > t.max_output_chars:
            omitted = len(content) - t.max_output_chars
            content = (
                content[: t.max_output_chars] + f"\n[output truncated: {omitted} more characters]"
            )
        return ToolResult(t.name, content, ok, (time.perf_counter() - start) * 1000.0)

    def budget_spent(self, t: Tool, need: int, spent: int) -> ToolResult:
        """The answer to a call that would take its action past :attr:`action_work_budget`."""
        budget = self.action_work_budget
        if need > budget:
            text = (
                f"Error: this {t.name} call asks for more work ({need} units) than one action may "
                f"spend ({budget}): it was not run. Ask for less (fewer words, fewer results)."
            )
        else:
            text = (
                f"Error: this action's work budget is spent ({spent} of {budget} units used by its "
                f"earlier calls; this {t.name} call needs up to {need}): it was not run. Send it "
                "in a later action, or ask for less (a fuller name, fewer results)."
            )
        return ToolResult(t.name, text, False, 0.0)

    def _run_in_thread(self, t: Tool, args: BaseModel, context: Any) -> Any:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentenv-tool")
        future = (
            self._executor.submit(t.fn, args, context)
            if t.takes_context
            else self._executor.submit(t.fn, args)
        )
        try:
            return future.result(timeout=t.timeout_s)
        except FutureTimeout:
            # The stuck thread cannot be killed; abandon it and start a fresh one.
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
            raise ToolTimeout from None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_executor"] = None
        return state


MAX_EXPLAINED_ERRORS = 5
"""Argument errors listed in one message; the rest are counted, so the message stays short."""


def _explain(exc: ValidationError) -> str:
    """The validation errors in words, clipped: locations and messages may echo agent text."""
    errors = exc.errors(include_url=False)
    parts = []
    for err in errors[:MAX_EXPLAINED_ERRORS]:
        loc = _clip(".".join(str(p) for p in err["loc"]) or "arguments")
        if err["type"] == "extra_forbidden":
            parts.append(f"unexpected argument {loc!r}")
        elif err["type"] == "missing":
            parts.append(f"missing required argument {loc!r}")
        else:
            parts.append(f"{loc}: {_clip(err['msg'], 200)} (got {_short(err.get('input'))})")
    if len(errors) > MAX_EXPLAINED_ERRORS:
        parts.append(f"and {len(errors) - MAX_EXPLAINED_ERRORS} more")
    return "; ".join(parts)


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _short(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (
        ValueError,
        RecursionError,
    ):  # a value json cannot write (parsing bounds nesting; be safe)
        text = f"a {type(value).__name__}"
    return _clip(text)


def _without_titles(schema: Any) -> Any:
    if isinstance(schema, Mapping):
        # Drop pydantic's auto-generated "title" strings, not properties named "title".
        return {
            k: _without_titles(v)
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_without_titles(v) for v in schema]
    return schema
