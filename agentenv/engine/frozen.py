"""Read-only chat messages: what ``info["messages"]`` holds, shared safely between steps at no cost.

Why read-only rather than copied: ``info["messages"]`` is the whole
conversation, so copying it on every step costs time that grows with the
turn index (a 64-turn episode would copy some 130 dicts per step). Instead
each message is frozen once, when the env writes it, and every later
``info`` shares the same frozen objects in a new list. A caller that edits
one gets a ``TypeError`` that says how to copy it, instead of silently
changing what later steps (and the env) report.

A :class:`FrozenDict` is a ``dict`` and a :class:`FrozenList` is a ``list``,
so chat templates, ``json.dumps``, pickling (async vector envs) and equality
with plain dicts work as before. ``copy.copy`` and ``copy.deepcopy`` return
plain, editable ``dict``/``list`` objects.

Example:
    >>> m = freeze({"role": "assistant", "tool_calls": [{"function": {"name": "search"}}]})
    >>> m == {"role": "assistant", "tool_calls": [{"function": {"name": "search"}}]}
    True
    >>> m["content"] = "x"
    Traceback (most recent call last):
    ...
    TypeError: read-only: info's messages (and a frozen gold) are shared by every later step; edit a copy (copy.deepcopy(...))
    >>> import copy; editable = copy.deepcopy(m); editable["content"] = "x"; type(editable["tool_calls"]).__name__
    'list'
"""

from __future__ import annotations

import copy
from typing import Any, NoReturn, SupportsIndex

_READ_ONLY = "read-only: info's messages (and a frozen gold) are shared by every later step; edit a copy (copy.deepcopy(...))"


def _refuse(*_: Any, **__: Any) -> NoReturn:
    raise TypeError(_READ_ONLY)


class FrozenDict(dict):  # type: ignore[type-arg]
    """A ``dict`` that refuses every change after it is built."""

    __slots__ = ()
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return {k: copy.deepcopy(v, memo) for k, v in self.items()}


class FrozenList(list):  # type: ignore[type-arg]
    """A ``list`` that refuses every change after it is built."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = pop = remove = (
        clear
    ) = sort = reverse = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(v, memo) for v in self]


_CONTAINERS = (dict, list)


def freeze(value: Any) -> Any:
    """``value`` with every dict and list inside made read-only (strings and numbers are already)."""
    kind = type(value)
    if kind is dict:
        for item in value.values():
            if type(item) in _CONTAINERS:
                return FrozenDict({k: freeze(v) for k, v in value.items()})
        return FrozenDict(value)  # the common message: only strings inside
    if kind is FrozenDict:
        return value
    if kind is list or kind is FrozenList:
        return value if kind is FrozenList else FrozenList(freeze(v) for v in value)
    return value


class MessageLog(list):  # type: ignore[type-arg]
    """The env's own conversation: every message appended is frozen once, so ``list(log)`` is a safe info."""

    __slots__ = ()

    def __init__(self, messages: Any = ()) -> None:
        super().__init__(freeze(m) for m in messages)

    def append(self, message: Any) -> None:  # type: ignore[override]
        super().append(freeze(message))

    def extend(self, messages: Any) -> None:  # type: ignore[override]
        super().extend(freeze(m) for m in messages)

    def insert(self, index: SupportsIndex, message: Any) -> None:  # type: ignore[override]
        super().insert(index, freeze(message))

    def __iadd__(self, messages: Any) -> MessageLog:  # type: ignore[override]
        self.extend(messages)
        return self
