"""What one request to the retrieval server may hold: the limits, and the search body's parser.

Every limit is a field of :class:`ServerLimits`, and :func:`parse_search_body`
checks a ``POST /search`` body against them, raising :class:`RequestError`
with the HTTP status and a reason that names the field and what is expected.
Pure functions over bytes: the app (:mod:`agentenv.retrieval.server_app`) and
the tests call them without a running server.
"""

from __future__ import annotations

import dataclasses
import json

from agentenv.engine.strict_json import RepeatedKey, unique_keys


@dataclasses.dataclass(frozen=True)
class ServerLimits:
    """Bounds on what one request may ask and how much work may wait.

    Every bound exists so that one bad or greedy client cannot take the shared
    index away from the others: request-size bounds cap the work per request,
    the in-flight bound turns overload into a fast 503 instead of an unbounded
    queue whose latency grows until every client times out.
    """

    max_queries_per_request: int = 256
    """Queries in one ``POST /search``; clients split larger batches."""
    max_query_chars: int = 2048
    """Characters in one query; longer text is a bug upstream, not a query."""
    max_k: int = 100
    """Largest ``k``; tools show a handful of hits, never a whole corpus."""
    max_body_bytes: int = 1 << 20
    """Bytes in a request body (1 MiB), checked before JSON parsing."""
    max_batch_queries: int = 512
    """Queries merged into one ``search_batch`` call."""
    max_wait_ms: float = 1.0
    """How long an idle server waits for more queries before running a batch."""
    max_inflight_queries: int = 8192
    """Queries accepted but not yet answered; beyond this requests get 503."""
    retry_after_s: int = 1
    """The ``Retry-After`` value (whole seconds, as HTTP requires) sent with 503."""
    max_connections: int = 1024
    """Open connections per server process. At the cap the connection that has waited
    longest without a request in flight is closed to make room (see
    :mod:`agentenv.retrieval.connections`); 503 only when every one is busy."""
    max_connections_per_client: int = 512
    """Open connections from one client address, enforced the same way: a client that
    hoards idle connections loses its own oldest ones, not anyone else's."""
    header_timeout_s: float = 5.0
    """Seconds to send a request's headers, from connecting or from the request's first
    byte; a silent or trickling ("slowloris") connection is closed after this."""
    idle_timeout_s: float = 60.0
    """Seconds a keep-alive connection may wait between requests (env workers think
    between searches, so this is long; idle connections also yield to new ones)."""
    body_timeout_s: float = 10.0
    """Seconds to send a request's body once its headers are in."""
    max_header_bytes: int = 32768
    """Bytes of request line and headers; beyond this the answer is 431."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not value >= 0 or (value == 0 and field.name != "max_wait_ms"):  # NaN too
                raise ValueError(f"ServerLimits.{field.name} must be positive, got {value!r}")


class RequestError(Exception):
    """A client mistake, answered with ``status`` and a reason the client can act on."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def parse_search_body(body: bytes, limits: ServerLimits) -> tuple[list[str], int]:
    """Validate a ``POST /search`` body; raise RequestError saying what is expected.

    Example:
        >>> parse_search_body(b'{"queries": ["heat"], "k": 3}', ServerLimits())
        (['heat'], 3)
        >>> parse_search_body(b'{"queries": "heat", "k": 3}', ServerLimits())
        Traceback (most recent call last):
        ...
        agentenv.retrieval.server_requests.RequestError: 'queries' must be a list of strings, got str
    """
    if len(body) > limits.max_body_bytes:
        raise RequestError(413, f"body has {len(body)} bytes; at most {limits.max_body_bytes}")
    try:
        payload = json.loads(body, parse_int=bounded_int, object_pairs_hook=unique_keys)
    except RepeatedKey as exc:
        raise RequestError(422, f'{exc}; expected {{"queries": [str, ...], "k": int}}') from None
    except RecursionError:
        raise RequestError(
            400,
            f'{_deep_field(body)} nests too deeply; expected {{"queries": [str, ...], "k": int}}',
        ) from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise RequestError(
            400,
            f'body is not valid UTF-8 JSON ({exc}); expected {{"queries": [str, ...], "k": int}}',
        ) from None
    if not isinstance(payload, dict):
        raise RequestError(
            422,
            f'body must be a JSON object {{"queries": [str, ...], "k": int}}, got {request_kind(payload)}',
        )
    missing = [key for key in ("queries", "k") if key not in payload]
    if missing:
        raise RequestError(
            422, f'missing field(s) {missing}; expected {{"queries": [str, ...], "k": int}}'
        )
    unknown = sorted(set(payload) - {"queries", "k"})
    if unknown:
        raise RequestError(422, f"unknown field(s) {unknown}; only 'queries' and 'k' are accepted")
    queries, k = payload["queries"], payload["k"]
    if not isinstance(queries, list):
        raise RequestError(422, f"'queries' must be a list of strings, got {request_kind(queries)}")
    if len(queries) > limits.max_queries_per_request:
        raise RequestError(
            422,
            f"'queries' has {len(queries)} items; at most "
            f"{limits.max_queries_per_request} per request (split the batch)",
        )
    for i, query in enumerate(queries):
        if not isinstance(query, str):
            raise RequestError(422, f"'queries'[{i}] must be a string, got {request_kind(query)}")
        if len(query) > limits.max_query_chars:
            raise RequestError(
                422, f"'queries'[{i}] has {len(query)} characters; at most {limits.max_query_chars}"
            )
        if not query.isascii():
            try:
                query.encode()
            except UnicodeEncodeError:
                raise RequestError(
                    422,
                    f"'queries'[{i}] is not valid Unicode text (it holds an "
                    "unpaired surrogate escape)",
                ) from None
    if not isinstance(k, int) or isinstance(k, bool):
        raise RequestError(
            422, f"'k' must be an integer between 1 and {limits.max_k}, got {request_kind(k)}"
        )
    if not 1 <= k <= limits.max_k:
        raise RequestError(422, f"'k' is {k}; expected 1 <= k <= {limits.max_k}")
    return queries, k


_MAX_INT_DIGITS = 30


class _LongNumber:
    """Stands in for a JSON integer too long to be a ``k``, so the schema check names its field.

    ``int()`` refuses strings over 4,300 digits (CVE-2020-10735) with a
    ValueError that would not say which field was wrong, and any integer this
    long is out of range anyway.
    """

    def __init__(self, digits: int) -> None:
        self.digits = digits


def bounded_int(text: str) -> int | _LongNumber:
    if len(text) > _MAX_INT_DIGITS:
        return _LongNumber(len(text))
    return int(text)


def request_kind(value: object) -> str:
    """How an unexpected value is described in an error message."""
    if isinstance(value, _LongNumber):
        return f"an integer with {value.digits} digits"
    return type(value).__name__


def _deep_field(body: bytes) -> str:
    """Which top-level field of a too-deeply nested body holds the nesting ("'queries'", ...).

    Only called on the error path: walks the top-level object key by key,
    decoding each value until one overflows the recursion limit.
    """
    try:
        text = body.decode()
        decoder = json.JSONDecoder(parse_int=bounded_int)
        ws = json.decoder.WHITESPACE  # type: ignore[attr-defined]
        at = ws.match(text, 0).end()
        if text[at : at + 1] != "{":
            return "the body"
        at = ws.match(text, at + 1).end()
        while text[at : at + 1] == '"':
            key, at = decoder.raw_decode(text, at)
            at = ws.match(text, at).end() + 1  # the ':'
            at = ws.match(text, at).end()
            try:
                _, at = decoder.raw_decode(text, at)
            except RecursionError:
                return repr(str(key))
            at = ws.match(text, at).end() + 1  # the ','
            at = ws.match(text, at).end()
    except (ValueError, RecursionError, AttributeError):
        pass
    return "the body"
