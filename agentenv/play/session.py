"""Play an env by hand in the terminal: type actions, read tool results as tables.

``help`` lists the input forms and the tools; ``TOOL key=value ...``,
``TOOL VALUE`` (the one required argument) or ``TOOL {json}`` calls a tool;
``answer TEXT`` answers; ``say TEXT`` talks to the other side of a dialogue;
raw action text (``<tool_call>…``) is sent exactly as a model would send it.
A mistyped command is explained here, with a close match, and costs no turn
(see :mod:`agentenv.play.reading`).

Multi-agent ids (``DiagnosisDialogue-v0``, ``MediaConcierge-v0``) are played
from one side (``side``, default the lead: doctor or assistant); the env's
scripted policy plays the other (``env.default_policy``, or the family's
``asking`` scripted lead when the human plays the simulated side).

``tasks`` plays a task of the user's own file instead of the split's (as
``agentenv eval --tasks``), so a person can try a file by hand before a run on
it; an env that reads no task file is refused in one line before it is built.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import gymnasium as gym

from agentenv.errors import UserInputError
from agentenv.play.reading import InputError, parse_line
from agentenv.play.view import (
    briefing,
    final_summary,
    render_observation,
    shortcuts,
    tool_help,
    turn_line,
    width,
)
from agentenv.terminal_text import terminal_text


def _show(text: str) -> None:
    """Print what the env, its tools, the task file or the player wrote, terminal-safe: line breaks
    and tabs are kept (a tool's output and a briefing are read as lines), every other control
    character (ESC sequences, ``\\r``, BEL, bidi overrides) is shown as an escape
    (:func:`~agentenv.terminal_text.terminal_text`), so a task question or a document cannot clear
    the screen, retitle the window or overwrite a line."""
    print(terminal_text(text, keep="\n\t"))


def _takes(entry_point: object, keyword: str) -> bool:
    """Whether the env class behind ``entry_point`` names ``keyword`` among its parameters (an entry
    point that cannot be resolved or inspected takes nothing: the caller then leaves the keyword out)."""
    import inspect

    from agentenv.families import resolve

    try:
        cls = resolve(entry_point) if isinstance(entry_point, str) else entry_point
        return keyword in inspect.signature(cls).parameters
    except (ImportError, AttributeError, TypeError, ValueError):
        return False


def _described_tools(entry_point: object) -> dict[str, bool]:
    """``{"tools_in_prompt": True}`` when the env takes it: a person reads no JSON schemas, so the
    system prompt shown at the start must describe the tools (families of your own may not have it)."""
    return {"tools_in_prompt": True} if _takes(entry_point, "tools_in_prompt") else {}


def _dialogue_entry_point(env_id: str) -> str | None:
    """The entry point of a multi-agent id, or None for a Gymnasium id."""
    from agentenv.multiagent import registry

    try:
        return registry.spec(env_id).entry_point
    except KeyError:
        return None


def _check_tasks(env_id: str, tasks: Path) -> None:
    """Refuse ``--tasks`` in one line before anything is built: an env that reads no task file, then a
    path that cannot be one (:func:`~agentenv.evaluation.run_args.check_tasks_path`).

    Why a dialogue has its own first check: ``check_tasks_path``'s env check reads Gymnasium's
    registry, which holds no multi-agent id. A dialogue whose class names no ``tasks`` parameter
    (``MediaConcierge-v0``) builds its tasks from the split, and ``tasks=`` failed inside it with
    Python's ``got multiple values for argument 'tasks'``.
    """
    from agentenv.evaluation.run_args import check_tasks_path

    entry_point = _dialogue_entry_point(env_id)
    if entry_point is None:
        check_tasks_path(tasks, env_id=env_id)
        return
    if not _takes(entry_point, "tasks"):
        from agentenv.families import family_of_env

        family = family_of_env(env_id)
        single = f", or play your tasks on {family.envs[0].id}" if family.envs else ""
        raise UserInputError(
            f"--tasks: {env_id} reads no task file of yours (its env takes no 'tasks' keyword); "
            f"use --split {'/'.join(family.splits)} instead{single}"
        )
    check_tasks_path(tasks)


def _source(split: str, tasks: Path | None) -> dict[str, str]:
    """The ``split`` and ``tasks`` keywords of the env (with ``tasks`` the env serves the file's tasks
    as split ``custom`` and the split is not read, as in ``agentenv eval``)."""
    return {"split": split} if tasks is None else {"split": split, "tasks": str(tasks)}


@contextmanager
def _env_refusals(env_id: str, split: str, tasks: Path | None) -> Iterator[None]:
    """An env that refuses what it was made with (an empty split, a bad task row) is a user error
    naming the id and the arguments, as ``agentenv eval`` says it (exit 2), not an internal one."""
    try:
        yield
    except UserInputError:
        raise
    except (ValueError, TypeError, KeyError) as err:
        given = f"split={split!r}" if tasks is None else f"tasks={str(tasks)!r}"
        text = str(err).strip()
        message = text.splitlines()[0] if text else type(err).__name__
        message = message.split(" was raised from the environment creator for ")[0]
        raise UserInputError(f"{env_id} ({given}): {message}") from err


def _dialogue(
    env_id: str, split: str, side: str | None, tasks: Path | None = None
) -> tuple[gym.Env, str, str, int | None] | None:
    """The single-agent view of a multi-agent id for ``side``, or None for a Gymnasium id."""
    from agentenv.multiagent import registry
    from agentenv.multiagent.single_agent import as_single_agent

    entry_point = _dialogue_entry_point(env_id)
    if entry_point is None:
        return None
    with _env_refusals(env_id, split, tasks):
        aec = registry.make(env_id, **_source(split, tasks), **_described_tools(entry_point))
    side = side or aec.lead
    if side not in aec.possible_agents:
        raise UserInputError(
            f"--as must be one of {', '.join(aec.possible_agents)} for {env_id}, got {side!r}"
        )
    others = {}
    for name in aec.possible_agents:
        if name == side:
            continue
        try:
            others[name] = aec.default_policy(name)
        except (ValueError, NotImplementedError):
            leads = aec.scripted_leads()
            others[name] = leads.get("asking") or next(iter(leads.values()))
    other = next(a for a in aec.possible_agents if a != side)
    return (
        as_single_agent(aec, agent=side, others=others),
        side,
        other,
        aec.max_turns if side == aec.lead else None,
    )


def play(
    env_id: str,
    *,
    split: str = "validation",
    seed: int | None = None,
    side: str | None = None,
    tasks: str | Path | None = None,
    read: Callable[[str], str] = input,
) -> int:
    """Run one interactive episode, reading lines with ``read(prompt)``; returns 0.

    ``tasks``: a task file (or folder) of your own, played instead of ``split``; ``seed`` picks one
    of its tasks as it picks one of a split's. A bad one is a one-line :class:`UserInputError`.
    """
    import agentenv  # noqa: F401

    if read is input:
        try:
            import readline  # noqa: F401  (line editing and history for input())
        except ImportError:
            pass

    path = None if tasks is None else Path(tasks)
    if path is not None:
        _check_tasks(env_id, path)
    dialogue = _dialogue(env_id, split, side, path)
    if dialogue is None:
        if side is not None:
            raise UserInputError(f"--as is only for multi-agent ids; {env_id} has one agent")
        try:
            from agentenv.families import bare_id, family_of_env

            family_of_env(env_id)  # imports a family kept outside agentenv ("module:Id")
            described = _described_tools(gym.spec(bare_id(env_id)).entry_point)
            with _env_refusals(env_id, split, path):
                env: gym.Env = gym.make(env_id, **_source(split, path), **described)
        except gym.error.Error as err:
            raise UserInputError(f"{err} (`agentenv list` shows the ids)") from None
        say_to, role, max_turns = None, None, getattr(env.unwrapped, "max_turns", None)
        dialogue_env = None
    else:
        env, role, say_to, max_turns = dialogue
        dialogue_env = getattr(env.unwrapped, "aec_env", None)  # its reward config and costs
    can_answer = dialogue is None or max_turns is not None
    obs, info = env.reset(seed=seed)
    tools = list(info.get("tools") or [])
    names = [t["function"]["name"] for t in tools]

    print(
        terminal_text(  # one line: a line break in the path is shown as \n
            f"== {env_id}"
            + (f", a task of {path}" if path is not None else "")
            + (f": you are the {role}; the {say_to} is scripted" if role else "")
        )
    )
    messages = info.get("messages") or []
    if (
        messages
        and messages[0].get("role") == "system"
        and str(messages[0]["content"]).strip() not in obs
    ):
        _show(briefing(str(messages[0]["content"]), names))
    print("\n" + "-" * 40)
    _show(obs)  # the task's question, as the file or split wrote it
    print("-" * 40)
    forms = ["TOOL key=value", "TOOL VALUE"] if tools else []
    forms += [f"say TEXT (to the {say_to})"] if say_to else []
    forms += ["answer TEXT"] if can_answer else []
    intro = (
        f"Tools: {', '.join(names)}.  " if names else ""
    ) + f"Type {', '.join(forms)}; `help` explains."
    _show(textwrap.fill(intro, width(), subsequent_indent="  "))
    last_output = ""
    while True:
        try:
            line = read(f"\n[{turn_line(int(info.get('turn', 0)), max_turns)}] > ")
        except (EOFError, KeyboardInterrupt):
            print()
            return 0
        try:
            parsed = parse_line(line, tools, say_to=say_to, can_answer=can_answer)
        except InputError as err:
            print(  # escaped before it is wrapped: the wrapped lines are what is measured
                textwrap.fill(
                    terminal_text(f"! {err}  (nothing was sent; no turn used)"),
                    width(),
                    initial_indent="  ",
                    subsequent_indent="    ",
                )
            )
            continue
        if parsed.command == "help":
            _show(shortcuts(tools, say_to=say_to, can_answer=can_answer))
            if tools:
                _show("\nTools:\n" + tool_help(tools))
            continue
        if parsed.command == "quit":
            return 0
        if parsed.command == "full":
            _show(  # every row, in the same layout as the turn showed (not raw JSON)
                render_observation(last_output, max_rows=sys.maxsize)
                if last_output
                else "(no tool output yet)"
            )
            continue
        assert parsed.action is not None
        obs, reward, terminated, truncated, info = env.step(parsed.action)
        last_output = obs
        if say_to and parsed.action.startswith("<say>") and obs and not obs.startswith("Error"):
            _show(f"{say_to}: {obs}")
        elif obs:
            _show(render_observation(obs))
        if terminated or truncated:
            if say_to and not can_answer and terminated:
                print(f"(the {say_to} gave the final answer)")
            _show(
                final_summary(
                    reward,
                    info,
                    truncated=truncated and not terminated,
                    says=say_to is not None and can_answer,
                    asks_are_calls=say_to is not None
                    and can_answer
                    and getattr(dialogue_env, "item_tool_calls", 0) > 0,
                    over_limit=getattr(
                        getattr(dialogue_env or env.unwrapped, "reward_config", None),
                        "over_limit",
                        None,
                    ),
                )
            )
            return 0
