"""The ``hf`` agent: a local transformers causal LM, run in-process (no server).

``agentenv eval MediaSearch-v0 --agent hf --agent-args model=PATH --split test --episodes 100``
scores a saved checkpoint (a directory written by ``save_pretrained`` for the
model and its tokenizer) with the same runner, records and confidence
intervals as any other agent. Nothing is fetched from a hub: the directory is
loaded with ``local_files_only=True``.

Each turn:

1. ``info["messages"]`` (system, user, assistant with ``tool_calls``, tool) is
   rendered with the tokenizer's chat template, ``add_generation_prompt=True``;
   ``info["tools"]`` goes to the template's ``tools=`` only with
   ``tools_in_template=true`` (small models trained on compact prompts never
   saw schemas), and ``enable_thinking`` is passed as a template kwarg when set.
2. A hand-written decoding loop with a KV cache samples until a stop id (the
   tokenizer's eos, ``<|im_end|>`` and the generation config's eos ids, those
   that exist), ``max_new_tokens``, or the model's context window
   (``config.max_position_embeddings``), whichever comes first.
3. The new ids, less a final stop id, are decoded with
   ``skip_special_tokens=False``: that text is the action, verbatim, so the env
   parses the ``<tool_call>`` blocks and ``<answer>`` the model wrote.

Why a loop of our own rather than ``model.generate``: ``generate`` samples
from torch's global generator. Here sampling (``temperature > 0``) draws from
a ``torch.Generator`` seeded from the episode's numpy generator at
:meth:`HFAgent.reset`, so the same run seed gives the same actions, whatever
else the process did; greedy decoding (``temperature=0``, the default) is an
argmax in the same loop.

A prompt that fills the context window cannot be continued: ``act`` raises
:class:`~agentenv.evaluation.agents.AgentFailure` naming both sizes, the
runner records it and the env scores the episode unanswered. A generation that
reaches the window stops there (``last_finish_reason == "window"``).

The model and tokenizer are loaded once per process and path (a module-level
cache), so ``--workers N`` loads them once in each worker.

``model=`` is a directory or a packaged model's name (``model=smollm2-135m``,
:mod:`agentenv.models`), resolved to its verified directory; a name that is not
installed is one line naming the install command.

**Batched, token-exact episodes** (``batch_size=N``, the default for a packaged
model: 16): the runner runs ``N`` episodes on threads and every turn's
generation goes through one shared :class:`~agentenv.baselines.hf_batch.Batcher`,
which decodes the waiting turns together with a KV cache
(:mod:`agentenv.baselines.hf_batch`), stopping a turn at ``<|im_end|>`` or once a
``</tool_call>`` or ``</answer>`` is written (``stop_strings``), and continuing
each episode's turn from its own KV cache (``reuse_cache``: only the last sampled
id and the env's turn are computed, not the whole conversation). In this mode the
agent keeps each episode's ids as :class:`agentenv.tokens.TokenEnv` does: the
prompt and each env turn are rendered by
:func:`~agentenv.tokens.chat_templates.hf_template`, the policy's ids are
appended as sampled and never re-encoded (``trajectory_ids``, ``loss_mask`` and
``logprobs`` hold them). With ``batch_size=1`` (the default for a directory)
each turn re-renders ``info["messages"]`` and decodes alone, as before.

Every path sets its thread policy (:func:`agentenv.models.threads.apply_thread_policy`):
``threads=`` or ``OMP_NUM_THREADS``, and ``OMP_WAIT_POLICY=PASSIVE`` when torch
is not loaded yet.

Example:
    >>> HFAgentArgs(model="")
    Traceback (most recent call last):
    ...
    agentenv.errors.UserInputError: the hf agent needs model=DIR, a local directory with a saved model and tokenizer
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agentenv.core import Task
from agentenv.errors import UserInputError
from agentenv.evaluation.agents import AgentFailure
from agentenv.evaluation.arguments import args_from_strings

__all__ = ["HFAgent", "HFAgentArgs", "load_model", "make_hf_agent"]

END_OF_TURN = "<|im_end|>"
"""ChatML's end of an assistant turn (Qwen); a stop id when the tokenizer knows it."""

_DTYPES = ("auto", "float32", "bfloat16", "float16")


@dataclass
class HFAgentArgs:
    """Knobs of the hf agent (``--agent-args model=checkpoints/qwen3-sft max_new_tokens=512``)."""

    model: str = ""
    """A local directory holding a saved model and tokenizer (required; never fetched from a hub)."""
    max_new_tokens: int = 256
    """Most tokens generated per turn (fewer when the context window ends first)."""
    temperature: float = 0.0
    """Sampling temperature; 0 is greedy."""
    top_p: float = 1.0
    """Nucleus sampling mass (with ``temperature > 0``); 1 keeps every token."""
    tools_in_template: bool = False
    """Pass ``info["tools"]`` to the chat template's ``tools=`` (the template then renders the schemas)."""
    enable_thinking: bool | None = None
    """Chat template kwarg ``enable_thinking`` (Qwen3: ``false`` renders the no-think header); None passes none."""
    threads: int | None = None
    """``torch.set_num_threads`` for this process when given."""
    device: str = "cpu"
    """Torch device of the model: ``cpu``, ``cuda``, ``cuda:1``, ..."""
    dtype: str = "auto"
    """``float32``, ``bfloat16`` or ``float16``; ``auto``: the checkpoint's dtype, except that on cpu
    only a bfloat16 checkpoint on a CPU with bf16 matrix units runs in bfloat16, all else in float32
    (:mod:`agentenv.models.precision`: without those units bfloat16 was 25x slower)."""
    batch_size: int | None = None
    """Episodes generated together (token-exact, batched); None: 16 for a packaged model name, else 1."""
    stop_strings: str = "</tool_call>|</answer>"
    """With ``batch_size > 1``: texts that end a turn, ``|``-separated (empty: only the end-of-turn id)."""
    reuse_cache: bool = True
    """With ``batch_size > 1``: continue each turn from the episode's KV cache (only the new ids are
    computed); false re-reads the whole conversation every turn."""

    def __post_init__(self) -> None:
        from agentenv.models import is_model_name, resolve_model

        if not self.model:
            raise UserInputError(
                "the hf agent needs model=DIR, a local directory with a saved model and tokenizer"
            )
        named = is_model_name(self.model)
        if named:
            self.model = resolve_model(self.model)  # ModelNotInstalled names the install command
        if self.batch_size is None:
            self.batch_size = 16 if named else 1
        if self.batch_size < 1:
            raise UserInputError(f"hf agent: batch_size must be at least 1, got {self.batch_size}")
        if self.max_new_tokens < 1:
            raise UserInputError(
                f"hf agent: max_new_tokens must be at least 1, got {self.max_new_tokens}"
            )
        if self.temperature < 0 or not 0 < self.top_p <= 1:
            raise UserInputError(
                f"hf agent: need temperature >= 0 and 0 < top_p <= 1, "
                f"got temperature={self.temperature}, top_p={self.top_p}"
            )
        if self.threads is not None and self.threads < 1:
            raise UserInputError(f"hf agent: threads must be at least 1, got {self.threads}")
        if self.dtype not in _DTYPES:
            raise UserInputError(
                f"hf agent: dtype must be one of {', '.join(_DTYPES)}, got {self.dtype!r}"
            )
        if self.device != "cpu":
            from agentenv.models.training import resolve_device

            try:
                resolve_device(self.device)
            except UserInputError as err:
                raise UserInputError(
                    f"hf agent: {err}".replace("--device cpu", "device=cpu")
                ) from None
        path = Path(self.model).expanduser()
        if not path.exists():
            from agentenv.did_you_mean import closest
            from agentenv.models import MODEL_NAMES

            hint = closest(self.model.strip().lower(), list(MODEL_NAMES))
            raise UserInputError(
                f"hf agent: model={self.model}: no such directory"
                + (f" (did you mean the packaged model {hint!r}?)" if hint else "")
                + " (give a packaged name, see `agentenv models list`, or a local directory written "
                "by save_pretrained; nothing is downloaded)"
            )
        if not path.is_dir():
            raise UserInputError(
                f"hf agent: model={self.model} is not a directory "
                "(give the directory written by save_pretrained)"
            )
        if not (path / "config.json").is_file():
            raise UserInputError(
                f"hf agent: {self.model} holds no config.json; "
                "save the model there with model.save_pretrained(DIR)"
            )


def make_hf_agent(**kwargs: Any) -> HFAgent:
    """The ``hf`` entry of the agent registry: ``--agent-args`` strings -> :class:`HFAgentArgs`."""
    try:
        args = args_from_strings(HFAgentArgs, kwargs)
    except UserInputError:
        raise
    except ValueError as err:  # an unknown key or an unparseable value: a one-line CLI error
        raise UserInputError(f"hf agent: {err}") from None
    return HFAgent(args)


_LOADED: dict[tuple[str, str, str], tuple[Any, Any]] = {}


def load_model(path: str, *, device: str = "cpu", dtype: str = "auto") -> tuple[Any, Any]:
    """(model, tokenizer) of a local checkpoint directory, loaded once per process and (path, device, dtype)."""
    key = (str(Path(path).expanduser().resolve()), device, dtype)
    if key not in _LOADED:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if dtype == "auto":
            torch_dtype: Any = "auto"
            if device == "cpu":  # bfloat16 only where the CPU has bf16 matrix units, else float32
                from agentenv.models.precision import cpu_dtype

                torch_dtype = getattr(torch, cpu_dtype(_saved_dtype(key[0])))
        else:
            torch_dtype = getattr(torch, dtype)
        try:
            tokenizer = AutoTokenizer.from_pretrained(key[0], local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(
                key[0], local_files_only=True, dtype=torch_dtype
            )
        except (OSError, ValueError) as err:
            raise UserInputError(
                f"hf agent: cannot load a model and tokenizer from {path}: {err}"
            ) from err
        if not getattr(tokenizer, "chat_template", None):
            raise UserInputError(
                f"hf agent: the tokenizer in {path} has no chat_template; "
                "save one with the tokenizer (tokenizer.chat_template = ...; save_pretrained)"
            )
        model.to(device)
        model.eval()
        _LOADED[key] = (model, tokenizer)
    return _LOADED[key]


def _saved_dtype(path: str) -> str | None:
    """The ``dtype`` (or ``torch_dtype``) written in a checkpoint's ``config.json``, if any."""
    import json

    try:
        config = json.loads((Path(path) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found = config.get("dtype", config.get("torch_dtype"))
    return found if isinstance(found, str) else None


def _context_window(model: Any, tokenizer: Any) -> int | None:
    """Most positions the model takes: ``max_position_embeddings``, else a finite tokenizer limit."""
    config = getattr(model, "config", None)
    window = getattr(config, "max_position_embeddings", None)
    if isinstance(window, int) and window > 0:
        return window
    limit = getattr(tokenizer, "model_max_length", None)
    return limit if isinstance(limit, int) and 0 < limit < 10**8 else None


def _stop_ids(model: Any, tokenizer: Any) -> frozenset[int]:
    """The tokenizer's eos, ``<|im_end|>`` and the generation config's eos ids, those that exist."""
    ids: set[int] = set()
    if isinstance(tokenizer.eos_token_id, int):
        ids.add(tokenizer.eos_token_id)
    vocab = tokenizer.get_vocab()
    if END_OF_TURN in vocab:
        ids.add(int(vocab[END_OF_TURN]))
    generation = getattr(model, "generation_config", None)
    eos = getattr(generation, "eos_token_id", None)
    for i in [eos] if isinstance(eos, int) else (eos or ()):
        if isinstance(i, int):
            ids.add(i)
    return frozenset(ids)


def _forward_keywords(model: Any) -> tuple[str, dict[str, Any]]:
    """The forward keyword of the KV cache (``cache`` in recent transformers, else ``past_key_values``)
    and the prompt pass's extra kwargs (``logits_to_keep=1`` where accepted: no logits for every prompt id)."""
    try:
        parameters = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return "past_key_values", {}
    prefill = {"logits_to_keep": 1} if "logits_to_keep" in parameters else {}
    return ("cache" if "cache" in parameters else "past_key_values"), prefill


class HFAgent:
    """A local causal LM acting in any agentenv env; see the module docstring."""

    name = "hf"

    def __init__(self, args: HFAgentArgs) -> None:
        from agentenv.models.threads import apply_thread_policy

        self.args = args
        self.thread_policy = apply_thread_policy(args.threads)
        """What :func:`~agentenv.models.threads.apply_thread_policy` set (threads, wait policy)."""
        import torch

        self.model, self.tokenizer = load_model(args.model, device=args.device, dtype=args.dtype)
        self.window: int | None = _context_window(self.model, self.tokenizer)
        """Most positions (prompt plus generated ids); None when the model states no limit."""
        self.stop_ids: frozenset[int] = _stop_ids(self.model, self.tokenizer)
        self._cache_arg, self._prefill_kwargs = _forward_keywords(self.model)
        self._generator = torch.Generator(device=args.device)
        self._generator.manual_seed(0)
        self.last_prompt_ids: list[int] | None = None
        """The ids of the last rendered prompt."""
        self.last_token_ids: list[int] | None = None
        """The ids generated for the last action, a final stop id included."""
        self.last_finish_reason: str | None = None
        """``stop`` (a stop id), ``length`` (``max_new_tokens``) or ``window`` (the context window)."""
        self.generated_tokens = 0
        """Ids generated by this agent so far (for throughput reports)."""
        self.generate_s = 0.0
        """Seconds spent in the decoding loop so far (prompt forward included)."""
        self.episodes_in_flight: int = int(args.batch_size or 1)
        """Episodes the runner should run at once for this agent (threads sharing one batcher)."""
        self.trajectory_ids: list[int] = []
        """Batched mode: the episode's ids so far, prompt, policy and env ids interleaved (TokenEnv's)."""
        self.loss_mask: list[int] = []
        """Batched mode: 1 on the ids the policy sampled, 0 on ids the template rendered."""
        self.logprobs: list[float | None] = []
        """Batched mode: each sampled id's log-probability (None on rendered ids)."""
        self._template: Any = None
        self._batcher: Any = None
        self._n_messages = 0
        self._closed = True
        self._past: Any = None
        self._tools: list[Any] | None = None
        if self.episodes_in_flight > 1:
            self._template, self._batcher = _shared_batching(self)

    def reset(
        self,
        obs: str,
        info: Mapping[str, Any],
        *,
        task: Task | None = None,
        rng: np.random.Generator | None = None,
    ) -> None:
        seed = int(rng.integers(2**63 - 1)) if rng is not None else 0
        self._generator.manual_seed(seed)
        if self._template is not None:
            self._tools = list(info.get("tools") or []) if self.args.tools_in_template else None
            self.trajectory_ids = list(self._template.render_prefix(info["messages"], self._tools))
            self.loss_mask = [0] * len(self.trajectory_ids)
            self.logprobs = [None] * len(self.trajectory_ids)
            self._n_messages = len(info["messages"])
            self._closed = True
            self._past = None

    def prompt_ids(self, info: Mapping[str, Any]) -> list[int]:
        """The conversation so far rendered by the chat template, ending with the assistant header, as ids."""
        kwargs: dict[str, Any] = {}
        if self.args.enable_thinking is not None:
            kwargs["enable_thinking"] = bool(self.args.enable_thinking)
        tools = list(info.get("tools") or []) if self.args.tools_in_template else None
        text = self.tokenizer.apply_chat_template(
            [dict(m) for m in info["messages"]],
            tools=tools or None,
            add_generation_prompt=True,
            tokenize=False,
            **kwargs,
        )
        # The template writes any bos itself; encoding must not add a second one.
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        if self._template is not None:
            return self._act_batched(info)
        prompt = self.prompt_ids(info)
        self.last_prompt_ids = prompt
        budget = self.args.max_new_tokens
        if self.window is not None:
            room = self.window - len(prompt)
            if room < 1:
                raise AgentFailure(
                    f"the prompt is {len(prompt)} tokens but the model's context window "
                    f"(max_position_embeddings) is {self.window}: no room to generate"
                )
            budget = min(budget, room)
        ids, reason = self.generate(prompt, budget)
        if reason == "length" and budget < self.args.max_new_tokens:
            reason = "window"  # the context window, not max_new_tokens, ended it
        self.last_token_ids, self.last_finish_reason = ids, reason
        text_ids = ids[:-1] if ids and ids[-1] in self.stop_ids else ids
        return self.tokenizer.decode(text_ids, skip_special_tokens=False)

    def _act_batched(self, info: Mapping[str, Any]) -> str:
        """One turn through the shared batcher, keeping the ids exactly as TokenEnv would."""
        from agentenv.baselines.hf_batch import Request

        messages = info["messages"]
        new = messages[self._n_messages :]
        if new:  # the env appended our last action and its reply: render only the reply
            if new[0].get("role") != "assistant":
                raise AgentFailure(
                    "the env did not append the assistant message for the last action"
                )
            env_ids = self._template.render_env_turn(new[1:], self._tools, closed=self._closed)
            self._extend(env_ids, None)
        self._n_messages = len(messages)
        prompt = list(self.trajectory_ids)
        self.last_prompt_ids = prompt
        budget = self.args.max_new_tokens
        if self.window is not None:
            room = self.window - len(prompt)
            if room < 1:
                raise AgentFailure(
                    f"the prompt is {len(prompt)} tokens but the model's context window "
                    f"(max_position_embeddings) is {self.window}: no room to generate"
                )
            budget = min(budget, room)
        request = Request(
            prompt,
            budget,
            temperature=self.args.temperature,
            top_p=self.args.top_p,
            generator=self._generator,
            past=self._past,
            keep_cache=self.args.reuse_cache,
        )
        start = time.perf_counter()
        self._past = None  # handed over: the batch builds its own tensors from it
        result = self._batcher.submit(request)
        self._past = result.cache
        self.generate_s += time.perf_counter() - start
        self.generated_tokens += len(result.ids)
        reason = result.reason
        if reason == "length" and budget < self.args.max_new_tokens:
            reason = "window"
        self.last_token_ids, self.last_finish_reason = list(result.ids), reason
        self._extend(result.ids, result.logprobs)
        self._closed = bool(result.ids) and result.ids[-1] in self._template.eos_ids
        return self._template.decode(result.ids[:-1] if self._closed else result.ids)

    def close(self) -> None:
        """Stop the shared batcher (the runner calls this when a run is stopped): turns in flight
        fail as agent failures, so the episode threads end at once; later agents get a new one."""
        if self._batcher is not None:
            with _BATCHERS_LOCK:
                for key, (_, batcher) in list(_BATCHERS.items()):
                    if batcher is self._batcher:
                        del _BATCHERS[key]
            self._batcher.close()

    def _extend(self, ids: Sequence[int], logprobs: Sequence[float] | None) -> None:
        self.trajectory_ids.extend(int(i) for i in ids)
        self.loss_mask.extend([0 if logprobs is None else 1] * len(ids))
        self.logprobs.extend([None] * len(ids) if logprobs is None else list(logprobs))

    def generate(self, prompt: Sequence[int], max_new_tokens: int) -> tuple[list[int], str]:
        """Ids continuing ``prompt`` (a final stop id included) and why it ended: ``stop`` or ``length``."""
        import torch

        start = time.perf_counter()
        out_ids: list[int] = []
        reason = "length"
        with torch.inference_mode():
            inputs = torch.tensor([list(prompt)], dtype=torch.long, device=self.args.device)
            out = self.model(input_ids=inputs, use_cache=True, **self._prefill_kwargs)
            for step in range(max_new_tokens):
                token = self._choose(out.logits[0, -1])
                out_ids.append(token)
                if token in self.stop_ids:
                    reason = "stop"
                    break
                if step + 1 == max_new_tokens:
                    break
                inputs = torch.tensor([[token]], dtype=torch.long, device=self.args.device)
                cache = getattr(out, "cache", None)
                if cache is None:
                    cache = out.past_key_values
                out = self.model(input_ids=inputs, use_cache=True, **{self._cache_arg: cache})
        self.generate_s += time.perf_counter() - start
        self.generated_tokens += len(out_ids)
        return out_ids, reason

    def _choose(self, logits: Any) -> int:
        import torch

        if self.args.temperature == 0:
            return int(torch.argmax(logits).item())
        probs = torch.softmax(logits.float() / self.args.temperature, dim=-1)
        if self.args.top_p < 1.0:
            sorted_probs, order = torch.sort(probs, descending=True)
            cumulative = torch.cumsum(sorted_probs, dim=-1)
            keep = (cumulative - sorted_probs) < self.args.top_p  # the first token is always kept
            sorted_probs = sorted_probs * keep
            choice = torch.multinomial(
                sorted_probs / sorted_probs.sum(), 1, generator=self._generator
            )
            return int(order[choice].item())
        return int(torch.multinomial(probs, 1, generator=self._generator).item())


_BATCHERS: dict[tuple[int, int, str], tuple[Any, Any]] = {}
_BATCHERS_LOCK = __import__("threading").Lock()


def _shared_batching(agent: HFAgent) -> tuple[Any, Any]:
    """The (template, batcher) every agent of one loaded model and stop strings shares in this process.

    The batch holds ``batch_size`` episodes; the stop ids are the template's end of turn and the
    agent's stop ids, so a generation that ends with one of them is a closed turn.
    """
    from agentenv.baselines.hf_batch import Batcher, generate_batch
    from agentenv.tokens.chat_templates import hf_template

    args = agent.args
    stops = tuple(s for s in args.stop_strings.split("|") if s)
    key = (id(agent.model), int(args.batch_size or 1), "|".join(stops))
    with _BATCHERS_LOCK:
        if key not in _BATCHERS:
            kwargs = (
                {} if args.enable_thinking is None else {"enable_thinking": args.enable_thinking}
            )
            template = hf_template(
                agent.tokenizer,
                eos_ids=sorted(agent.stop_ids),
                end_of_turn=END_OF_TURN if END_OF_TURN in agent.tokenizer.get_vocab() else None,
                **kwargs,
            )
            stop_ids = frozenset(agent.stop_ids) | frozenset(template.eos_ids)
            pad = agent.tokenizer.pad_token_id
            pad_id = int(pad if isinstance(pad, int) else min(stop_ids))
            model, device, cache_arg = agent.model, args.device, agent._cache_arg

            def run(requests: list[Any], abort: Any) -> list[Any]:
                return generate_batch(
                    model,
                    requests,
                    stop_ids=stop_ids,
                    pad_id=pad_id,
                    decode=template.decode,
                    stop_strings=stops,
                    device=device,
                    cache_arg=cache_arg,
                    abort=abort,
                )

            _BATCHERS[key] = (template, Batcher(run, capacity=int(args.batch_size or 1)))
        return _BATCHERS[key]
