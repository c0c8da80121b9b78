"""Import Ray on demand and connect to a cluster, turning setup mistakes into one-line fixes.

Why a module of its own: ``import agentenv`` must never import Ray (it is an
optional extra, and heavy), and every entry point of this integration (the
``--ray`` flag of ``agentenv eval``, :class:`~agentenv.integrations.ray.rollouts.RolloutPool`,
the retrieval service) meets the same three user errors: the extra is not
installed, the address names no running cluster, or ``auto`` finds none.
Each gets a :class:`~agentenv.errors.UserInputError` naming the fix.

``--ray`` takes:

- ``local``: start a Ray instance on this machine for this run (no dashboard);
- ``auto``: the running cluster this machine belongs to (``ray start`` was run
  here, or ``RAY_ADDRESS`` is set);
- ``HOST:PORT`` (the head's GCS address, port 6379 by default) or
  ``ray://HOST:PORT`` (Ray Client).

Example:
    >>> split_address("10.0.0.5:6379"), split_address("ray://head:10001"), split_address("auto")
    (('10.0.0.5', 6379), ('head', 10001), None)
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from agentenv.errors import UserInputError

INSTALL_HINT = 'pip install -e ".[ray]" (from a checkout) or pip install "agentenv[ray]"'
"""What to run when Ray is missing."""

REACHABLE_TIMEOUT_S = 3.0
"""How long a TCP probe of an explicit address may take before it is called unreachable."""


def require_ray() -> ModuleType:
    """The ``ray`` module, or a :class:`UserInputError` that names the extra to install."""
    try:
        import ray
    except ImportError as err:
        raise UserInputError(
            f"Ray is not installed ({err}); install the ray extra: {INSTALL_HINT}"
        ) from None
    return ray


def split_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of an explicit ``HOST:PORT`` or ``ray://HOST:PORT`` address; None for local/auto."""
    if address in ("local", "auto"):
        return None
    rest = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise UserInputError(
            f"--ray {address!r}: expected local, auto, HOST:PORT or ray://HOST:PORT "
            "(e.g. 10.0.0.5:6379, the address `ray start --head` prints)"
        )
    return host.strip("[]"), int(port)


def _check_reachable(address: str) -> None:
    """Fail in seconds, not minutes, when nothing listens at an explicit address."""
    host, port = split_address(address) or ("", 0)
    try:
        with socket.create_connection((host, port), timeout=REACHABLE_TIMEOUT_S):
            pass
    except OSError as err:
        raise UserInputError(
            f"--ray {address}: no Ray cluster answers there ({err}). Start the head node with "
            f"`ray start --head --port {port}` on {host}, check the address it printed, or use --ray local"
        ) from None


@contextmanager
def keeping_sigterm() -> Iterator[None]:
    """Run ``ray.init`` without letting it replace this process's SIGTERM handler.

    ``ray.init`` installs a SIGTERM handler in the driver that every process forked
    afterwards inherits: a ``multiprocessing`` pool's ``terminate()`` then no longer
    kills its workers and hangs (seen in a test process). A library should leave
    the caller's signal disposition as it found it; ``agentenv eval`` turns SIGTERM
    into a clean stop of its own, and the caller shuts Ray down.
    """
    previous = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if threading.current_thread() is threading.main_thread() and previous is not None:
            signal.signal(signal.SIGTERM, previous)


def connect(address: str = "local", *, num_cpus: int | None = None) -> bool:
    """Connect this process to Ray; returns whether this call did (and so must ``ray.shutdown()``).

    An already connected process is left as it is (a trainer or a test may
    have called ``ray.init`` itself): the call returns False.
    """
    ray = require_ray()
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    quiet: dict[str, Any] = {
        "log_to_driver": False,
        "configure_logging": True,
        "logging_level": "warning",
    }
    if address == "local":
        cpus = num_cpus if num_cpus is not None else os.cpu_count() or 1
        with keeping_sigterm():
            ray.init(num_cpus=cpus, include_dashboard=False, **quiet)
        return True
    if address != "auto":
        _check_reachable(address)
    try:
        with keeping_sigterm():
            ray.init(address=address, **quiet)
    except (ConnectionError, ray.exceptions.AuthenticationError) as err:
        where = "RAY_ADDRESS" if os.environ.get("RAY_ADDRESS") else "this machine"
        found_none = "Could not find any running Ray instance" in str(err)
        auth = (
            ""
            if found_none
            else (
                " If it is running: a cluster with token authentication (the default of `ray start`) also needs "
                "RAY_AUTH_MODE=token here and its token in ~/.ray/auth_token or RAY_AUTH_TOKEN"
            )
        )
        raise UserInputError(
            f"--ray {address}: no running Ray cluster found from {where} ({_first_line(err)}). "
            "Start one with `ray start --head` (and `ray start --address HEAD:6379` on the other nodes), "
            f"give the head's address as --ray HOST:PORT, or use --ray local.{auth}"
        ) from None
    return True


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def cluster_cpus() -> float:
    """CPUs the connected cluster has in all (for messages about workers that cannot be placed)."""
    return float(require_ray().cluster_resources().get("CPU", 0.0))
