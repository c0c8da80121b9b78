"""Many episodes' turns generated at once: one batched decoding loop with a KV cache, shared by agents.

On a CPU a 135M model decodes one sequence at about 13 tokens/s, and a batch of 32 at about 220: the
matrix products are the same size in time until the batch fills the cores. So the ``hf`` agent with
``batch_size=N`` runs ``N`` episodes on threads (the runner's ``--concurrency`` machinery) and every
thread's ``act`` hands its prompt ids to one :class:`Batcher`, which gathers the requests of all
threads and generates them together with :func:`generate_batch`.

:func:`generate_batch`:

* left-pads the prompts, with explicit position ids (a padded row's positions start at 0 where its
  ids start) and an attention mask, and fills the KV cache in one forward pass;
* decodes one id per row per step from the cache;
* stops a row at a stop id (``<|im_end|>``), when its text ends with a stop string (``</tool_call>``,
  ``</answer>``: the end of a tool call or an answer), at its budget, and drops finished rows from
  the batch and the cache (``batch_select_indices``), so one long row does not make the others pay;
* returns, per row, the sampled ids and their log-probabilities, as sampled: the caller keeps those
  very ids in its trajectory and never re-encodes them (:class:`agentenv.tokens.TokenEnv`'s rule);
* with ``keep_cache``, also each row's keys and values (:class:`RowCache`), so the episode's next
  turn passes them back (``Request.past``) and only its new ids (the last sampled id and the env's
  turn) are computed: a turn continues from the cache instead of re-reading the conversation. Rows
  with and without a past share a batch: each row's cached part is left-padded to the longest, its
  new ids left-padded after it, and the attention mask and position ids skip the gaps.

Sampling draws each row from its own ``torch.Generator``, so a row's ids do not depend on which rows
shared its batch, except through floating-point differences of batched arithmetic: greedy decoding
in a batch can, at a near-tie, pick another id than the same prompt decoded alone.

Example:
    >>> ends_with_any([60, 47, 62], lambda ids: "".join(map(chr, ids)), ("</a>",))
    False
    >>> ends_with_any([60, 47, 97, 62], lambda ids: "".join(map(chr, ids)), ("</a>",))
    True
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DEFAULT_STOP_STRINGS",
    "Batcher",
    "Generation",
    "Request",
    "RowCache",
    "ends_with_any",
    "generate_batch",
]

DEFAULT_STOP_STRINGS = ("</tool_call>", "</answer>")
"""A turn is over once a tool call or an answer is closed (the env adds the end of turn)."""

TAIL_IDS = 8
"""Ids decoded to look for a stop string: more than any stop string's token count in practice."""


def ends_with_any(
    ids: Sequence[int], decode: Callable[[list[int]], str], stops: Sequence[str]
) -> bool:
    """Whether the text of ``ids``' last :data:`TAIL_IDS` ids ends with one of ``stops``."""
    if not stops or not ids:
        return False
    tail = decode(list(ids[-TAIL_IDS:])).rstrip()
    return any(tail.endswith(s) for s in stops)


@dataclass
class RowCache:
    """One sequence's keys and values for its first ``length`` ids: per layer ``(keys, values)``,
    each ``[1, kv_heads, length, head_dim]``."""

    length: int
    layers: list[tuple[Any, Any]]


@dataclass
class Generation:
    """What one row produced: the ids as sampled (a final stop id included), their log-probabilities
    under the sampling distribution, and why it ended (``stop``, ``stop_string`` or ``length``)."""

    ids: list[int]
    logprobs: list[float]
    reason: str
    cache: RowCache | None = None
    """With ``keep_cache``: the keys and values of the prompt and every id but the last."""


@dataclass
class Request:
    """One prompt to continue: its ids, its token budget, and how to pick its ids."""

    prompt: list[int]
    budget: int
    temperature: float = 0.0
    top_p: float = 1.0
    generator: Any = None
    """A ``torch.Generator`` (sampling only)."""
    past: RowCache | None = None
    """Keys and values of ``prompt[:past.length]`` from an earlier turn (``keep_cache``)."""
    keep_cache: bool = False
    """Return this row's keys and values for its next turn (as ``generate_batch(keep_cache=True)``)."""
    done: threading.Event = field(default_factory=threading.Event)
    result: Generation | None = None
    error: BaseException | None = None


def _pick(logits: Any, request: Request) -> tuple[int, float]:
    """One id for one row and its log-probability under the distribution it was drawn from."""
    import torch

    logits = logits.float()
    if request.temperature == 0:
        token = int(torch.argmax(logits).item())
        return token, float(torch.log_softmax(logits, dim=-1)[token].item())
    logp = torch.log_softmax(logits / request.temperature, dim=-1)
    probs = logp.exp()
    if request.top_p < 1.0:
        sorted_probs, order = torch.sort(probs, descending=True)
        keep = (torch.cumsum(sorted_probs, dim=-1) - sorted_probs) < request.top_p
        kept = sorted_probs * keep
        kept = kept / kept.sum()
        choice = int(torch.multinomial(kept, 1, generator=request.generator).item())
        return int(order[choice].item()), float(torch.log(kept[choice]).item())
    token = int(torch.multinomial(probs, 1, generator=request.generator).item())
    return token, float(logp[token].item())


def generate_batch(
    model: Any,
    requests: Sequence[Request],
    *,
    stop_ids: frozenset[int],
    pad_id: int,
    decode: Callable[[list[int]], str],
    stop_strings: Sequence[str] = DEFAULT_STOP_STRINGS,
    device: str = "cpu",
    cache_arg: str = "cache",
    abort: threading.Event | None = None,
    keep_cache: bool = False,
    timings: dict[str, float] | None = None,
) -> list[Generation]:
    """Continue every request's prompt at once; see the module docstring.

    ``timings``, when given, gets ``prefill_s`` (the cache fill and the first ids) and ``decode_s``
    (every later step), measured inside this one call (for benchmarks).

    Raises:
        AgentFailure: ``abort`` was set (the run is stopping); checked before every decode step.
    """
    import torch

    from agentenv.evaluation.agents import AgentFailure

    n = len(requests)
    # Each row's cached part: at most all its ids but the last (a row always computes one id).
    cached = [min(r.past.length, len(r.prompt) - 1) if r.past else 0 for r in requests]
    suffixes = [r.prompt[c:] for r, c in zip(requests, cached, strict=True)]
    past_width = max(cached)
    width = max(len(x) for x in suffixes)
    ids = torch.full((n, width), pad_id, dtype=torch.long)
    mask = torch.zeros((n, past_width + width), dtype=torch.long)
    positions = torch.zeros((n, width), dtype=torch.long)
    for row, (suffix, c) in enumerate(zip(suffixes, cached, strict=True)):
        ids[row, width - len(suffix) :] = torch.tensor(suffix, dtype=torch.long)
        mask[row, past_width - c : past_width] = 1
        mask[row, past_width + width - len(suffix) :] = 1
        positions[row, width - len(suffix) :] = torch.arange(c, c + len(suffix))
    ids, mask, positions = ids.to(device), mask.to(device), positions.to(device)
    extra: dict[str, Any] = {}
    if past_width:
        extra[cache_arg] = _batched_past(requests, cached, past_width, device, model.config)
    outs: list[list[int]] = [[] for _ in requests]
    logps: list[list[float]] = [[] for _ in requests]
    reasons: list[str] = ["length"] * n
    caches: list[RowCache | None] = [None] * n
    active = list(range(n))
    started = time.perf_counter()
    prefill_s: float | None = None
    with torch.inference_mode():
        out = model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            use_cache=True,
            logits_to_keep=1,
            **extra,
        )
        next_position = positions[:, -1] + 1
        while True:
            if abort is not None and abort.is_set():
                raise AgentFailure("the run was stopped while this turn was generated")
            logits = out.logits[:, -1]
            cache = getattr(out, "cache", None)
            if cache is None:
                cache = out.past_key_values
            keep: list[int] = []
            for slot, row in enumerate(active):
                token, logp = _pick(logits[slot], requests[row])
                outs[row].append(token)
                logps[row].append(logp)
                if token in stop_ids:
                    reasons[row] = "stop"
                elif ends_with_any(outs[row], decode, stop_strings):
                    reasons[row] = "stop_string"
                elif len(outs[row]) < requests[row].budget:
                    keep.append(slot)
                    continue
                if keep_cache or requests[row].keep_cache:
                    caches[row] = _row_cache(cache, slot, mask[slot])
            if prefill_s is None:
                prefill_s = time.perf_counter() - started
            if not keep:
                break
            if len(keep) < len(active):
                index = torch.tensor(keep, dtype=torch.long, device=device)
                cache.batch_select_indices(index)
                mask, next_position = mask[index], next_position[index]
                active = [active[slot] for slot in keep]
            feed = torch.tensor(
                [[outs[row][-1]] for row in active], dtype=torch.long, device=device
            )
            mask = torch.cat([mask, mask.new_ones((len(active), 1))], dim=1)
            out = model(
                input_ids=feed,
                attention_mask=mask,
                position_ids=next_position[:, None],
                use_cache=True,
                **{cache_arg: cache},
            )
            next_position = next_position + 1
    if timings is not None:
        timings["prefill_s"] = prefill_s or 0.0
        timings["decode_s"] = time.perf_counter() - started - timings["prefill_s"]
    return [Generation(outs[i], logps[i], reasons[i], caches[i]) for i in range(n)]


def _row_cache(cache: Any, slot: int, mask: Any) -> RowCache:
    """Row ``slot``'s keys and values without its padding (copies: the batch's tensors are freed)."""
    real = mask.bool()
    layers = [
        (
            layer.keys[slot : slot + 1, :, real].clone(),
            layer.values[slot : slot + 1, :, real].clone(),
        )
        for layer in cache.layers
    ]
    return RowCache(int(real.sum()), layers)


def _batched_past(
    requests: Sequence[Request], cached: list[int], width: int, device: str, config: Any
) -> Any:
    """A ``DynamicCache`` holding each row's cached keys and values, left-padded to ``width``."""
    import torch
    from transformers import DynamicCache

    n = len(requests)
    source = next(r.past for r, c in zip(requests, cached, strict=True) if c and r.past)
    layers = []
    for index, (keys, values) in enumerate(source.layers):
        shape = (n, keys.shape[1], width, keys.shape[3])
        batch_keys = torch.zeros(shape, dtype=keys.dtype, device=device)
        batch_values = torch.zeros(shape, dtype=values.dtype, device=device)
        for row, (request, c) in enumerate(zip(requests, cached, strict=True)):
            if c and request.past is not None:
                row_keys, row_values = request.past.layers[index]
                batch_keys[row, :, width - c :] = row_keys[0, :, :c]
                batch_values[row, :, width - c :] = row_values[0, :, :c]
        layers.append((batch_keys, batch_values))
    return DynamicCache(ddp_cache_data=layers, config=config)


class Batcher:
    """Gathers the requests of many threads and runs them as batches on one generation thread.

    A batch starts when ``capacity`` requests wait, or ``gather_s`` after the latest arrival (the
    other threads are stepping their envs, which takes milliseconds, or have no episode left).
    """

    def __init__(
        self,
        run: Callable[[list[Request], threading.Event], list[Generation]],
        *,
        capacity: int,
        gather_s: float = 0.03,
    ) -> None:
        self._run = run
        self.capacity = capacity
        self.gather_s = gather_s
        self._pending: list[Request] = []
        self._cond = threading.Condition()
        self._last_arrival = 0.0
        self._thread: threading.Thread | None = None
        self.batches: list[int] = []
        """Size of every batch run so far (for reports)."""
        self.closed = threading.Event()
        """Set by :meth:`close`: the batch in progress stops, waiting and new requests fail."""

    def close(self) -> None:
        """Stop: the batch in progress ends at its next step and every waiting request fails with an
        :class:`~agentenv.evaluation.agents.AgentFailure`, so threads blocked in :meth:`submit`
        finish their episodes at once (a stopped run would otherwise wait for them)."""
        from agentenv.evaluation.agents import AgentFailure

        with self._cond:
            self.closed.set()
            waiting, self._pending = self._pending, []
            self._cond.notify_all()
        for request in waiting:
            request.error = AgentFailure("the run was stopped before this turn was generated")
            request.done.set()

    def submit(self, request: Request) -> Generation:
        """Queue ``request``, wait for its batch, return its generation (or raise what it raised)."""
        from agentenv.evaluation.agents import AgentFailure

        with self._cond:
            if self.closed.is_set():
                raise AgentFailure("the run was stopped")
            self._pending.append(request)
            self._last_arrival = time.perf_counter()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._loop, name="agentenv-hf-batch", daemon=True
                )
                self._thread.start()
            self._cond.notify_all()
        request.done.wait()
        if request.error is not None:
            raise request.error
        assert request.result is not None
        return request.result

    def _take(self) -> list[Request]:
        with self._cond:
            while True:
                if not self._pending:
                    self._cond.wait(timeout=1.0)
                    if not self._pending:
                        return []
                    continue
                waited = time.perf_counter() - self._last_arrival
                if len(self._pending) >= self.capacity or waited >= self.gather_s:
                    batch, self._pending = (
                        self._pending[: self.capacity],
                        self._pending[self.capacity :],
                    )
                    return batch
                self._cond.wait(timeout=self.gather_s - waited)

    def _loop(self) -> None:
        while True:
            batch = self._take()
            if not batch:
                with self._cond:
                    if not self._pending:
                        self._thread = None
                        return
                continue
            self.batches.append(len(batch))
            try:
                results = self._run(batch, self.closed)
            except BaseException as err:  # noqa: BLE001 - handed to every waiting thread
                for request in batch:
                    request.error = err
                    request.done.set()
                continue
            for request, result in zip(batch, results, strict=True):
                request.result = result
                request.done.set()
