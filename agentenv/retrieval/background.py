"""A uvicorn server bound before it starts and run in a daemon thread: the part the retrieval
server and ``serve-env`` share for tests, benchmarks and one-process trainers."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any, TypeVar

Server = TypeVar("Server", bound="ThreadedUvicorn")


class ThreadedUvicorn:
    """Serve ``server`` (a ``uvicorn.Server``) on the already bound ``sock`` in a daemon thread.

    Binding first means ``port=0`` picks a free port and ``url`` is known at once;
    ``stop()`` (or leaving the ``with`` block) shuts it down.
    """

    what = "server"
    """How errors name this server."""

    def _serve_in_thread(self, server: Any, sock: socket.socket, thread_name: str) -> None:
        """Keep ``server`` and ``sock``, set ``url`` from the bound address, and make the thread."""
        self._server = server
        self._sock = sock
        host, port = sock.getsockname()[:2]
        self.url = f"http://{f'[{host}]' if ':' in host else host}:{port}"
        self._thread = threading.Thread(
            target=_run_quietly, args=(server, sock), name=thread_name, daemon=True
        )

    def start(self: Server, timeout_s: float = 10.0) -> Server:
        """Start serving (once; later calls return at once) and wait until it accepts connections."""
        if self._thread.ident is not None:
            return self
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self._thread.is_alive():
            if self._server.started:
                return self
            time.sleep(0.01)
        if not self._thread.is_alive():
            raise RuntimeError(f"{self.what} at {self.url} failed to start; its log says why")
        raise RuntimeError(f"{self.what} at {self.url} did not start within {timeout_s} s")

    def stop(self, timeout_s: float = 5.0) -> None:
        """Ask uvicorn to exit and wait for the thread."""
        self._server.should_exit = True
        self._thread.join(timeout_s)
        self._sock.close()

    def __enter__(self: Server) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _run_quietly(server: Any, sock: socket.socket) -> None:
    """``server.run``, whose failed startup (uvicorn exits with ``SystemExit``, after logging why)
    ends the thread instead of surfacing as an unhandled thread exception."""
    try:
        server.run(sockets=[sock])
    except SystemExit:
        pass
