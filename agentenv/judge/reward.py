"""JudgeReward: an LLM judge as an optional reward component, asked in several phrasings, cached.

Why optional and never the default: judge scores shifted with small prompt
changes in the workshop, so rewards here are rule-based, and a judge is an
extra signal that must come with its consistency report
(:func:`~agentenv.judge.consistency.judge_consistency`).

Each (question, answer, gold) is put to the judge once per paraphrased prompt
(:data:`~agentenv.judge.prompts.PROMPTS`); :meth:`JudgeReward.score` is the
fraction of prompts that say yes. Verdicts are cached per (model, prompt,
question, answer, gold): in memory, and in a JSONL file when ``cache_path`` is
given, so a rollout is scored once, however often it is read. A failing
endpoint or an unreadable reply raises; it never scores 0.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Sequence
from pathlib import Path

from agentenv.judge.client import ChatClient
from agentenv.judge.prompts import PROMPTS, JudgePrompt, JudgeReplyError, parse_verdict


class JudgeReward:
    """Asks an OpenAI-compatible endpoint whether an answer matches the gold.

    Example (no request is made: the verdict is already cached):
        >>> judge = JudgeReward("http://127.0.0.1:9", model="m")
        >>> judge.remember(judge.prompts[0], "2+2?", "four", "4", True)
        >>> judge.verdict("2+2?", "four", "4"), judge.client.requests
        (True, 0)
    """

    def __init__(
        self,
        endpoint: str | ChatClient,
        model: str = "judge",
        *,
        prompts: Sequence[JudgePrompt] = PROMPTS,
        cache_path: str | Path | None = None,
        timeout_s: float = 30.0,
        retries: int = 2,
        backoff_s: float = 0.5,
        api_key: str | None = None,
    ) -> None:
        self.client = (
            endpoint
            if isinstance(endpoint, ChatClient)
            else ChatClient(
                endpoint,
                model,
                timeout_s=timeout_s,
                retries=retries,
                backoff_s=backoff_s,
                api_key=api_key,
            )
        )
        if not prompts or len({p.name for p in prompts}) != len(prompts):
            raise ValueError("prompts must be a non-empty sequence with distinct names")
        self.prompts = tuple(prompts)
        self.cache_path = Path(cache_path) if cache_path is not None else None
        self._cache: dict[str, bool] = (
            read_cache(self.cache_path) if self.cache_path is not None else {}
        )
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- verdicts
    def verdict(self, question: str, answer: str, gold: str, prompt: JudgePrompt | int = 0) -> bool:
        """One prompt's verdict: does ``answer`` match ``gold``? Cached."""
        p = self.prompts[prompt] if isinstance(prompt, int) else prompt
        key = self._key(p, question, answer, gold)
        with self._lock:
            if key in self._cache:
                return self._cache[key]
        context = f"prompt {p.name!r}, answer {answer[:60]!r}"
        reply = self.client.complete(p.messages(question, answer, gold), context=context)
        try:
            verdict = parse_verdict(reply)
        except JudgeReplyError as exc:
            raise JudgeReplyError(f"{exc} ({context}, model {self.client.model!r})") from None
        self.remember(p, question, answer, gold, verdict)
        return verdict

    def verdicts(self, question: str, answer: str, gold: str) -> tuple[bool, ...]:
        """Every prompt's verdict, in the order of :attr:`prompts`."""
        return tuple(self.verdict(question, answer, gold, p) for p in self.prompts)

    def score(self, question: str, answer: str, gold: str) -> float:
        """The component value: the fraction of prompts whose verdict is yes."""
        votes = self.verdicts(question, answer, gold)
        return sum(votes) / len(votes)

    # ------------------------------------------------------------------- cache
    def remember(
        self, prompt: JudgePrompt, question: str, answer: str, gold: str, verdict: bool
    ) -> None:
        """Store a verdict (and append it to the JSONL cache file, if any)."""
        key = self._key(prompt, question, answer, gold)
        with self._lock:
            if key in self._cache:
                return
            self._cache[key] = verdict
            if self.cache_path is not None:
                self.cache_path.parent.mkdir(parents=True, exist_ok=True)
                line = {
                    "key": key,
                    "verdict": verdict,
                    "model": self.client.model,
                    "prompt": prompt.name,
                }
                with self.cache_path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(line) + "\n")

    def __len__(self) -> int:
        return len(self._cache)

    def _key(self, prompt: JudgePrompt, question: str, answer: str, gold: str) -> str:
        text = json.dumps(
            [self.client.model, prompt.messages(question, answer, gold)], ensure_ascii=False
        )
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


_KEY = re.compile(r"[0-9a-f]{64}")
"""A cache key as :meth:`JudgeReward._key` writes it; a row's size is bounded by it."""

CACHE_FIX = "give a new cache path, or the path of a cache the judge wrote"
"""The fix a bad cache line names. Never "delete the file": the path may be a file of the user's
(an ``episodes.jsonl`` given as the cache by mistake), not a cache at all."""


def read_cache(path: Path) -> dict[str, bool]:
    """The verdicts of a JSONL cache file, by key; no file at ``path`` is an empty cache.

    Read as run files are (:func:`agentenv.evaluation.run_files.iter_lines`): a FIFO or a device
    (``/dev/zero`` grew the reader to 12 GB) is refused unopened, a line is read within a bound,
    and every bad line (not UTF-8, nested too deep, not a cache row) is one error naming
    ``path:line``.

    Raises:
        RunFileError: not a regular file, a part of the path that is a file, or a bad line.
    """
    from agentenv.evaluation.run_files import RunFileError, iter_lines

    cache: dict[str, bool] = {}
    try:
        for number, raw in iter_lines(path, "a judge cache line"):
            if raw.strip():
                key, verdict = _cache_row(raw, f"{path}:{number}")
                cache[key] = verdict
    except FileNotFoundError:
        return {}
    except NotADirectoryError:
        raise RunFileError(
            f"{path}: a part of this path is a file, not a folder; {CACHE_FIX}"
        ) from None
    except RunFileError as exc:  # a FIFO, a device, a long or bad line: add the fix once
        raise RunFileError(f"{exc}; {CACHE_FIX}") from None
    return cache


def _cache_row(raw: bytes, where: str) -> tuple[str, bool]:
    """``(key, verdict)`` of one cache line; anything else is a :class:`RunFileError` naming ``where``."""
    from agentenv.evaluation.run_files import RunFileError, parse_object

    row = parse_object(raw, where, "a judge cache line")
    key, verdict = row.get("key"), row.get("verdict")
    if not (isinstance(key, str) and _KEY.fullmatch(key) and isinstance(verdict, bool)):
        raise RunFileError(
            f"{where}: not a judge cache line (it needs a sha256 hex 'key' and a true/false "
            "'verdict')"
        )
    return key, verdict
