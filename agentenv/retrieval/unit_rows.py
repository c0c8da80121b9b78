"""``normalise_rows``: embeddings scaled to unit length, shared by every dense encoder.

Its own module so that the optional ONNX encoder (:mod:`agentenv.retrieval.onnx_minilm`)
and :mod:`agentenv.retrieval.encoders` (which loads it by kind) share it without
importing each other.
"""

from __future__ import annotations

import numpy as np

__all__ = ["normalise_rows"]


def normalise_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm, as float32; zero rows stay zero (never NaN).

    Norms are taken in float64 so that tiny rows do not underflow to zero.

    Example:
        >>> normalise_rows(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
        [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    x = np.asarray(x, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    out = np.zeros_like(x)
    np.divide(x, norms, out=out, where=norms > 0)
    return out.astype(np.float32)
