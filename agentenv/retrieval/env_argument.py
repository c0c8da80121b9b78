"""An env's ``retriever=`` argument, turned into a retriever under one rule for every family.

Why one helper: each family env takes ``retriever`` as a back-end name
(``"bm25"``, ``"dense"``, ...), the URL of a retrieval server, or a ready
:class:`~agentenv.retrieval.base.Retriever`. When each env checked that on
its own, the same bad value raised ``TypeError`` in one and ``ValueError`` in
the other. Here: a ``Retriever`` is used as is, a ``str`` is handed to the
family's ``build`` (which knows its corpus), and anything else is a
``TypeError`` (a wrong type, in Python's convention); an unknown name is
``build``'s ``ValueError``.

Example:
    >>> retriever_argument(3, build=lambda spec: None)
    Traceback (most recent call last):
    ...
    TypeError: retriever must be a name, a URL or a Retriever, not int
"""

from __future__ import annotations

from collections.abc import Callable

from agentenv.retrieval.base import Retriever


def retriever_argument(spec: object, *, build: Callable[[str], Retriever]) -> Retriever:
    """``spec`` as a retriever: itself if it is one, ``build(spec)`` for a name or URL."""
    if isinstance(spec, str):
        return build(spec)
    if isinstance(spec, Retriever):
        return spec
    raise TypeError(f"retriever must be a name, a URL or a Retriever, not {type(spec).__name__}")
