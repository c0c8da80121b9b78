"""``serve-env --protocol verl-tool --workers N --fronts F``: F HTTP fronts share one port, each linked to every worker.

Why: with ``--workers`` the envs step on N cores, but one front process still reads and writes
every request's HTTP and JSON on one core. With one trajectory a request and a ``finish`` after
it (verl-tool's agent loop), that front is most of the server's CPU, and more workers do not
help. Here F front processes each bind ``host:port`` with ``SO_REUSEPORT``, and the Linux kernel
spreads new connections over them (a hash of each connection's addresses); every front has a
socket to every worker, so any front answers any trajectory, and a trajectory's requests may
arrive at different fronts. The workers hold everything that decides an answer (:mod:`.shards`).

Processes. This one, the supervisor, binds the F listening sockets (port 0 then gives one port
to all, and a port in use fails before anything starts), makes one ``socketpair`` per front and
worker, starts the N workers (:mod:`.shard_worker`) and the F fronts (:func:`front_main`) with
their ends, closes its own copies, and waits. Its copies must close: a listening socket left
open here after its front exited would take a share of new connections that no one accepts.

* Ctrl-C or SIGTERM: every front stops as uvicorn does (the requests in flight are answered),
  closing its worker sockets; a worker exits once all its fronts have closed theirs, ending its
  trajectories. A process still there after :data:`STOP_TIMEOUT_S` is killed.
* A worker that exits: every front answers its trajectories 503 and ``/health`` says unhealthy,
  as with one front; the server runs on (restart it).
* A front that exits: its open connections close (a client sees a reset, not a hang), and the
  kernel sends new connections to the fronts left, which serve every trajectory; it is logged.
  When no front is left, the workers are stopped and the supervisor exits 1.
* The supervisor killed outright: each front gets SIGTERM (Linux's parent-death signal) and
  stops as above, and the workers follow.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from typing import Any

from agentenv.integrations.serve_env.limits import EnvServerLimits

logger = logging.getLogger("agentenv.serve_env")

STOP_TIMEOUT_S = 10.0
"""How long the fronts, then the workers, have to exit at shutdown before they are killed."""

BACKLOG = 2048
"""Each listening socket's queue of connections not yet accepted (uvicorn's default)."""


class NoReusePort(RuntimeError):
    """This platform cannot spread one port's connections over several processes."""


def shared_listeners(host: str, port: int, fronts: int) -> list[socket.socket]:
    """``fronts`` sockets bound to one ``host:port`` with ``SO_REUSEPORT``, listening.

    Raises:
        NoReusePort: off Linux (BSD and macOS have the option, but it does not spread connections).
        OSError: the port is taken.
    """
    from agentenv.retrieval.server import bind_listener

    if not sys.platform.startswith("linux") or not hasattr(socket, "SO_REUSEPORT"):
        raise NoReusePort(
            f"--fronts needs SO_REUSEPORT, which spreads one port's connections over several "
            f"processes on Linux only; this platform is {sys.platform!r}: run one front"
        )
    listeners: list[socket.socket] = []
    try:
        for _ in range(fronts):
            sock = bind_listener(host, port, reuse_port=True)
            listeners.append(sock)
            port = sock.getsockname()[1]  # port 0: the first socket's port for all
            sock.listen(BACKLOG)
    except OSError:
        for sock in listeners:
            sock.close()
        raise
    return listeners


def serve_fronts(
    listeners: list[socket.socket],
    *,
    env_id: str,
    workers: int,
    split: str,
    env_kwargs: Mapping[str, Any],
    limits: EnvServerLimits,
    log_level: str = "warning",
) -> int:
    """Start the workers and one front per listener, and wait until stopped; the exit code."""
    from agentenv.integrations.serve_env.shards import worker_config

    fronts = len(listeners)
    pairs = [[socket.socketpair() for _ in range(workers)] for _ in range(fronts)]
    config = worker_config(env_id, workers, split, env_kwargs, limits, log_level)
    worker_procs = []
    for w in range(workers):
        fds = [pairs[f][w][1].fileno() for f in range(fronts)]
        worker_procs.append(_spawn("shard_worker", {**config, "fds": fds}, fds))
    front_procs = []
    for f, listener in enumerate(listeners):
        fds = [pairs[f][w][0].fileno() for w in range(workers)]
        front_config = {
            "env_id": env_id,
            "workers": workers,
            "split": split,
            "env_kwargs": dict(env_kwargs),
            "limits": dataclasses.asdict(limits),
            "log_level": log_level,
            "worker_fds": fds,
            "listen_fd": listener.fileno(),
            "front": f,
            "fronts": fronts,
            "supervisor": os.getpid(),
        }
        front_procs.append(_spawn("fronts", front_config, [*fds, listener.fileno()]))
    for sock in [*listeners, *(end for row in pairs for pair in row for end in pair)]:
        sock.close()  # the children hold them now (see the module docstring)
    return _supervise(front_procs, worker_procs)


def _spawn(module: str, config: Mapping[str, Any], fds: list[int]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", f"agentenv.integrations.serve_env.{module}", json.dumps(config)],
        pass_fds=fds,
    )


def _supervise(
    front_procs: list[subprocess.Popen[bytes]], worker_procs: list[subprocess.Popen[bytes]]
) -> int:
    """Wait for Ctrl-C / SIGTERM or for every front to exit; then stop everything (the exit code)."""
    stopping: list[int] = []
    previous = {
        sig: signal.signal(sig, lambda signum, frame: stopping.append(signum))
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    reported: set[int] = set()
    code = 0
    try:
        while not stopping:
            for f, proc in enumerate(front_procs):
                if proc.poll() is not None and f not in reported:
                    reported.add(f)
                    logger.error(
                        "serve-env: front %d exited (exit code %s); %s",
                        f,
                        proc.returncode,
                        "the other fronts serve on"
                        if len(reported) < len(front_procs)
                        else "no front is left: stopping the workers",
                    )
            if len(reported) == len(front_procs):
                code = 1
                break
            time.sleep(0.1)
    finally:
        _stop(front_procs, signal.SIGTERM)
        _stop(worker_procs, None)  # they exit once every front has closed its sockets
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return code


def _stop(procs: list[subprocess.Popen[bytes]], sig: signal.Signals | None) -> None:
    """Send ``sig`` (if any) to the processes still running, wait up to STOP_TIMEOUT_S, kill the rest."""
    for proc in procs:
        if sig is not None and proc.poll() is None:
            proc.send_signal(sig)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for proc in procs:
        try:
            proc.wait(max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _die_with(parent: int) -> None:
    """SIGTERM this process when ``parent`` exits (Linux's ``PR_SET_PDEATHSIG``)."""
    import ctypes

    pr_set_pdeathsig = 1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(pr_set_pdeathsig, signal.SIGTERM)
    if os.getppid() != parent:  # it exited before the call
        os.kill(os.getpid(), signal.SIGTERM)


def front_main(argv: list[str] | None = None) -> int:
    """One front: the sharded verl-tool app on its shared socket, linked to the workers' sockets."""
    from agentenv.integrations.serve_env.runner import (
        checked_limits,
        configure_logging,
        serve_socket,
    )
    from agentenv.integrations.serve_env.shards import ShardedVerlToolApp

    config = json.loads((argv or sys.argv[1:])[0])
    _die_with(config["supervisor"])
    configure_logging(config["log_level"])
    sock = socket.socket(fileno=config["listen_fd"])
    limits = checked_limits(sock.getsockname()[0], EnvServerLimits(**config["limits"]), warn=False)
    app = ShardedVerlToolApp(
        config["env_id"],
        workers=config["workers"],
        split=config["split"],
        env_kwargs=config["env_kwargs"],
        limits=limits,
        info={"fronts": config["fronts"]},
        log_level=config["log_level"],
        worker_fds=config["worker_fds"],
        front=config["front"],
    )
    return 0 if serve_socket(app, sock, limits, log_level=config["log_level"]) else 3


if __name__ == "__main__":
    sys.exit(front_main())
