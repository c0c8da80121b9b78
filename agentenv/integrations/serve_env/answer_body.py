"""A verl-tool answer's body written in pieces: a long answer never takes the event loop in one go.

Why: an answer at the limits is 256 observations of 50 KB, 13 MB; joining and encoding it
took the event loop 15-30 ms in one piece, and every other client's request waited that long.
The servers (one process, :mod:`agentenv.integrations.verl_tool.app`, and the front of
``--workers N``, :mod:`.shards`) keep each observation's JSON as bytes, encoded in the slice
that stepped it, and the app sends a long body one piece a turn of the loop.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

CHUNK_BYTES = 1 << 18
"""An answer longer than this is written in pieces of about this size (256 KB), one a turn of the loop."""


class ObservationChunks:
    """An answer's JSON (as ``json.dumps`` of the whole would write it) from each observation's
    encoded JSON, in pieces of about :data:`CHUNK_BYTES`, each joined as it is sent.

    Why: an answer at the limits is 256 observations of 50 KB; joining and encoding it took the
    front's event loop 15-30 ms in one go, and every other client's request waited that long.
    The app sends the pieces one a turn of the loop (``length`` is the Content-Length).

    Example:
        >>> body = ObservationChunks([b'"a"', b'"b"'], [True, False], [True, True], chunk_bytes=1)
        >>> b"".join(body) == b'{"observations": ["a", "b"], "dones": [true, false], "valids": [true, true]}'
        True
        >>> body.length == len(b"".join(body))
        True
    """

    def __init__(
        self,
        texts: list[bytes],
        dones: list[bool],
        valids: list[bool],
        *,
        chunk_bytes: int = CHUNK_BYTES,
    ) -> None:
        self.texts = texts
        self.chunk_bytes = chunk_bytes
        self.head = HEAD
        self.tail = answer_tail(dones, valids)
        self.length = (
            len(self.head) + sum(map(len, texts)) + 2 * max(len(texts) - 1, 0) + len(self.tail)
        )

    def __iter__(self) -> Iterator[bytes]:
        texts, start, size, lead = self.texts, 0, 0, self.head
        for end, text in enumerate(texts, 1):
            size += len(text)
            if size >= self.chunk_bytes:
                yield lead + b", ".join(texts[start:end])
                start, size, lead = end, 0, b", "
        if start < len(texts):
            yield lead + b", ".join(texts[start:]) + self.tail
        else:  # no text left: after the last piece, no separator
            yield (self.head if start == 0 else b"") + self.tail


def observations_answer(
    texts: list[bytes], dones: list[bool], valids: list[bool]
) -> bytes | ObservationChunks:
    """The answer's body: bytes when short, else :class:`ObservationChunks`.

    The short body is joined at once, the bytes ``b"".join(ObservationChunks(...))`` gives.

    Example:
        >>> observations_answer([b'""'], [True], [True])
        b'{"observations": [""], "dones": [true], "valids": [true]}'
    """
    if len(texts) == 1 and type(dones[0]) is bool and type(valids[0]) is bool:
        tail = _ONE_TAILS[dones[0]][valids[0]]  # one trajectory a request: written once
        if len(HEAD) + len(texts[0]) + len(tail) <= CHUNK_BYTES:
            return HEAD + texts[0] + tail
    tail = answer_tail(dones, valids)
    length = len(HEAD) + sum(map(len, texts)) + 2 * max(len(texts) - 1, 0) + len(tail)
    if length <= CHUNK_BYTES:
        return HEAD + b", ".join(texts) + tail
    return ObservationChunks(texts, dones, valids)


def answer_headers(
    body: bytes | ObservationChunks, extra: list[tuple[bytes, bytes]]
) -> list[tuple[bytes, bytes]]:
    """An answer's HTTP headers: JSON, its length, then ``extra`` (the app's and the lean cycle's).

    Example:
        >>> answer_headers(b"{}", [(b"retry-after", b"1")])
        [(b'content-type', b'application/json'), (b'content-length', b'2'), (b'retry-after', b'1')]
    """
    length = len(body) if isinstance(body, bytes) else body.length
    return [
        (b"content-type", b"application/json"),
        (b"content-length", str(length).encode()),
        *extra,
    ]


def json_header_lines(length: int) -> bytes:
    """``answer_headers(body, [])`` as the head's lines, for a body of ``length`` bytes.

    Example:
        >>> json_header_lines(2) == b"".join(n + b": " + v + b"\\r\\n" for n, v in answer_headers(b"{}", []))
        True
    """
    return b"content-type: application/json\r\ncontent-length: " + str(length).encode() + b"\r\n"


HEAD = b'{"observations": ['
_BOOLS = {(True,): b"[true]", (False,): b"[false]"}
"""A one-trajectory answer's lists, written once."""


def answer_tail(dones: list[bool], valids: list[bool]) -> bytes:
    """The answer's end after its observations: ``], "dones": [...], "valids": [...]}`` as ``json`` writes it.

    Example:
        >>> answer_tail([True, False], [True, 1])
        b'], "dones": [true, false], "valids": [true, 1]}'
    """
    return b'], "dones": ' + bools_json(dones) + b', "valids": ' + bools_json(valids) + b"}"


def bools_json(values: list[bool]) -> bytes:
    """``json.dumps(values).encode()``, without ``json`` when every value is a bool.

    Example:
        >>> bools_json([True, False]), bools_json([]), bools_json([0])
        (b'[true, false]', b'[]', b'[0]')
    """
    if len(values) == 1 and type(values[0]) is bool:
        return _BOOLS[(values[0],)]
    parts = [b"true" if v is True else b"false" if v is False else b"" for v in values]
    if b"" in parts:  # not all bools (an int, say): json's own writing
        return json.dumps(values).encode()
    return b"[" + b", ".join(parts) + b"]"


_ONE_TAILS = tuple(
    tuple(answer_tail([done], [valid]) for valid in (False, True)) for done in (False, True)
)
"""``answer_tail([done], [valid])``, indexed ``[done][valid]``."""
