"""One retrieval server per corpus, run as a Ray actor; workers get its URL.

Why an actor: every env worker that builds its own index pays its memory and
build time again. One actor builds the index once and serves it with the
same HTTP server as ``agentenv serve-retrieval``
(:class:`~agentenv.retrieval.server.BackgroundServer`); workers pass its URL
as the env's ``retriever=`` argument, so their envs hold a small
:class:`~agentenv.retrieval.client.RetrievalClient` instead of an index.

Where it listens: the server has no authentication, so it binds to the node's
cluster address (``ray.util.get_node_ip_address()``, what the other nodes
reach it by), or to loopback with ``host="loopback"`` (one machine). Binding
to every interface (``0.0.0.0``) is refused unless asked for by name.

Restarts: with ``max_restarts > 0`` Ray starts the actor again after it dies,
and it binds the same port again, so give a fixed ``port``. Clients ride out
the gap with their bounded retries; widen them through the URL's query string
(``client_deadline_s``), since the default (4 s) is shorter than an index load.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from agentenv.errors import UserInputError
from agentenv.integrations.ray.cluster import require_ray

ALL_INTERFACES = ("0.0.0.0", "::", "")


class RetrievalService:
    """The actor: builds the index of ``corpus`` and serves it over HTTP until stopped."""

    def __init__(
        self,
        corpus: str,
        backend: str = "bm25",
        host: str = "node",
        port: int = 0,
        allow_all_interfaces: bool = False,
    ) -> None:
        from agentenv.retrieval import build_retriever
        from agentenv.retrieval.corpus_sources import corpus_retriever_params, load_corpus_texts
        from agentenv.retrieval.server import BackgroundServer

        start = time.perf_counter()
        ids, texts, checksum = load_corpus_texts(corpus)
        params = corpus_retriever_params(corpus, backend)  # as serve-retrieval builds it
        retriever = build_retriever(backend, texts, ids, corpus_checksum=checksum, **params)
        info = {
            "corpus": corpus,
            "checksum": checksum,
            "documents": len(ids),
            "backend": backend,
            "served_by": "ray actor",
        }
        bind = bind_address(host, allow_all_interfaces=allow_all_interfaces)
        self.server = BackgroundServer(
            retriever, info, bind, port, offload_search=backend.startswith(("dense", "hybrid"))
        )
        self.server.start()
        self.build_s = time.perf_counter() - start

    def url(self) -> str:
        """The server's base URL, e.g. ``http://10.0.0.5:8700``."""
        return self.server.url

    def stats(self) -> dict[str, Any]:
        """The micro-batcher's counters (requests, queries, batches, rejected), the build time and the pid."""
        stats = self.server.stats
        counters = {k: v for k, v in vars(stats).items() if isinstance(v, int | float)}
        return {**counters, "build_s": self.build_s, "pid": os.getpid()}

    def stop(self) -> None:
        """Stop serving (the actor stays until killed)."""
        self.server.stop()


def bind_address(host: str, *, allow_all_interfaces: bool = False) -> str:
    """The interface to bind: ``node`` (this node's cluster address), ``loopback``, or an explicit one.

    Example:
        >>> bind_address("loopback")
        '127.0.0.1'
        >>> bind_address("0.0.0.0")
        Traceback (most recent call last):
        ...
        agentenv.errors.UserInputError: the retrieval service has no authentication: refusing to listen on every interface (0.0.0.0); bind to host='node' (the cluster-internal address) or 'loopback', or pass allow_all_interfaces=True behind your own firewall
    """
    if host == "loopback":
        return "127.0.0.1"
    if host == "node":
        return require_ray().util.get_node_ip_address()
    if host in ALL_INTERFACES and not allow_all_interfaces:
        raise UserInputError(
            f"the retrieval service has no authentication: refusing to listen on every interface ({host or '*'}); "
            "bind to host='node' (the cluster-internal address) or 'loopback', or pass allow_all_interfaces=True "
            "behind your own firewall"
        )
    return host


@dataclass
class ServiceHandle:
    """A started service: its actor and the URL workers pass as ``retriever=``."""

    actor: Any
    url: str

    def env_kwargs(self) -> dict[str, str]:
        """The env kwargs that make an env ask this service: ``{"retriever": url}``."""
        return {"retriever": self.url}

    def stats(self) -> dict[str, Any]:
        """The server's live counters (of the current actor process: a restart starts them again)."""
        return self._call("stats")

    def stop(self) -> None:
        """Stop the server and its actor."""
        try:
            self._call("stop", timeout_s=10.0)
        finally:
            require_ray().kill(self.actor)

    def _call(self, method: str, timeout_s: float = 60.0) -> Any:
        """Call an actor method, waiting while Ray restarts the actor (it answers again once rebuilt)."""
        ray = require_ray()
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return ray.get(getattr(self.actor, method).remote(), timeout=timeout_s)
            except ray.exceptions.ActorUnavailableError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.2)


def start_retrieval_service(
    corpus: str,
    *,
    backend: str = "bm25",
    host: str = "node",
    port: int = 0,
    max_restarts: int = 0,
    client_deadline_s: float | None = None,
    allow_all_interfaces: bool = False,
    timeout_s: float = 300.0,
    **actor_options: Any,
) -> ServiceHandle:
    """Start the service of ``corpus`` on the connected cluster and wait until it answers.

    Args:
        corpus: a registered corpus name (``media``, ``rare-disease``), as for ``agentenv serve-retrieval``.
        backend: a retriever name (``agentenv.retrieval.RETRIEVER_NAMES``): ``bm25`` (default),
            ``hybrid-minilm``, ...
        host: ``node`` (the cluster address of the node the actor lands on), ``loopback`` or an address.
        port: 0 picks a free port; a restartable service (``max_restarts > 0``) needs a fixed one.
        max_restarts: times Ray may restart the actor after it dies.
        client_deadline_s: put in the URL's query string, so clients keep retrying this long (a restart).
        actor_options: passed to ``.options()``, e.g. ``num_cpus=1`` (the default) or a
            ``scheduling_strategy`` that pins the service to a node.
    """
    ray = require_ray()
    if max_restarts and not port:
        raise UserInputError(
            "a restartable retrieval service needs a fixed port (e.g. port=8700): "
            "after a restart its clients must find it at the same URL"
        )
    if host != "node":  # a refused interface fails here, not inside the actor
        bind_address(host, allow_all_interfaces=allow_all_interfaces)
    options = {"num_cpus": 1, "max_restarts": max_restarts, **actor_options}
    actor = (
        ray.remote(RetrievalService)
        .options(**options)
        .remote(corpus, backend, host, port, allow_all_interfaces)
    )
    url = ray.get(actor.url.remote(), timeout=timeout_s)
    if client_deadline_s is not None:
        url = f"{url}?deadline_s={client_deadline_s:g}&retries=20"
    return ServiceHandle(actor, url)
