"""A turn of the loop's requests are answered after its reads, and their answers sent after that.

Why it matters: a request whose answer is lost or sent on another connection, or a bug in one
answer that leaves the others of its turn unanswered, would hang a trainer's client.
"""

from __future__ import annotations

import asyncio
import gc
import weakref

from agentenv.integrations.serve_env.turn_batch import turn_of


class Transport:
    def __init__(self, closing: bool = False) -> None:
        self.sent: list[bytes] = []
        self.closing = closing

    def write(self, data: bytes) -> None:
        assert not self.closing, "a closing transport was written to"
        self.sent.append(data)

    def is_closing(self) -> bool:
        return self.closing


def test_a_turns_answers_run_in_order_after_it_and_their_bytes_leave_together() -> None:
    async def turn() -> tuple[list[str], list[list[bytes]], list[str], list[list[bytes]]]:
        turn = turn_of(asyncio.get_running_loop())
        a, b, gone = Transport(), Transport(), Transport(closing=True)
        log: list[str] = []

        def answer(name: str, transport: Transport, data: bytes) -> None:
            log.append(name)
            turn.queue(transport, data)
            assert transport.sent == [], "an answer left before its turn's answers were all made"

        turn.answer_soon(lambda: answer("a1", a, b"a1"))
        turn.answer_soon(lambda: answer("b1", b, b"b1"))
        turn.answer_soon(lambda: answer("gone", gone, b"x"))
        turn.answer_soon(lambda: answer("a2", a, b"a2"))
        before = (list(log), [list(a.sent), list(b.sent)])
        await asyncio.sleep(0)
        return before[0], before[1], log, [a.sent, b.sent, gone.sent]

    log_before, sent_before, log, sent = asyncio.run(turn())
    assert log_before == [] and sent_before == [[], []]
    assert log == ["a1", "b1", "gone", "a2"]
    assert sent == [[b"a1", b"a2"], [b"b1"], []]


def test_an_answer_that_raises_leaves_the_others_of_its_turn_answered(caplog) -> None:  # type: ignore[no-untyped-def]
    async def turn() -> list[bytes]:
        turn = turn_of(asyncio.get_running_loop())
        ok = Transport()

        def broken() -> None:
            raise RuntimeError("a bug")

        turn.answer_soon(broken)
        turn.answer_soon(lambda: turn.queue(ok, b"fine"))
        await asyncio.sleep(0)
        turn.answer_soon(lambda: turn.queue(ok, b"next turn"))
        await asyncio.sleep(0)
        return ok.sent

    assert asyncio.run(turn()) == [b"fine", b"next turn"]
    assert "answering a request of this turn of the loop failed" in caplog.text


def test_a_direct_write_sends_that_connections_queued_bytes_first() -> None:
    async def turn() -> list[bytes]:
        turn = turn_of(asyncio.get_running_loop())
        t = Transport()
        turn.queue(t, b"queued")
        turn.write_now(t, b"direct")
        await asyncio.sleep(0)
        return t.sent

    assert asyncio.run(turn()) == [b"queued", b"direct"]


def test_a_closed_loops_batch_does_not_keep_the_loop() -> None:
    """The batches are kept per loop in a weak dictionary; a batch holding its loop strongly
    would keep every closed loop (each ``asyncio.run``) alive for the process's life."""
    loop = asyncio.new_event_loop()
    turn_of(loop)
    gone = weakref.ref(loop)
    loop.close()
    del loop
    gc.collect()
    assert gone() is None
