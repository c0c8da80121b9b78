"""What every benchmark here prints the same way: the machine, warm-up, interleaved passes.

Why interleaved passes: these machines are shared, so load comes and goes.
Timing variant A for a while and then variant B puts any load change into
the A/B ratio; alternating short passes of every variant, and reporting the
median and spread over passes, keeps the ratio honest.

Example:
    >>> figures = interleaved({"noop": lambda: 1.0}, passes=5, warmup=1)
    >>> figures["noop"]["median"], figures["noop"]["passes"]
    (1.0, 5)
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
from collections.abc import Callable, Mapping
from typing import Any


def machine() -> dict[str, Any]:
    """The machine a figure was measured on: cores, load average at the start, Python."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "cores": os.cpu_count(),
        "load_avg_1_5_15": [round(x, 2) for x in load],
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
    }


def print_machine(title: str) -> dict[str, Any]:
    """Print the benchmark's title and the machine line; return the machine record."""
    record = machine()
    print(f"# {title}")
    print(
        f"# machine: {record['cores']} cores, load average {record['load_avg_1_5_15']} at start, "
        f"Python {record['python']} on {record['platform']}"
    )
    sys.stdout.flush()
    return record


def interleaved(
    cases: Mapping[str, Callable[[], float]], *, passes: int = 5, warmup: int = 1
) -> dict[str, dict[str, float]]:
    """Run each case's pass in turn, ``passes`` times round, after ``warmup`` unrecorded rounds.

    A case is a callable that runs one pass and returns its figure (a median
    time, a rate). The result holds, per case, the median over passes and the
    spread (min and max) with the number of passes.
    """
    if passes < 1:
        raise ValueError(f"passes must be at least 1, got {passes}")
    for _ in range(warmup):
        for run in cases.values():
            run()
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(passes):
        for name, run in cases.items():
            samples[name].append(float(run()))
    return {
        name: {
            "median": statistics.median(values),
            "min": min(values),
            "max": max(values),
            "passes": len(values),
        }
        for name, values in samples.items()
    }


def spread_text(figure: Mapping[str, float], digits: int = 1) -> str:
    """``median (min–max, n passes)`` for a table cell."""
    return (
        f"{figure['median']:.{digits}f} ({figure['min']:.{digits}f}–{figure['max']:.{digits}f}, "
        f"{int(figure['passes'])} passes)"
    )


def load_module(name: str, path: Any) -> Any:
    """The Python file at ``path`` imported as module ``name`` (registered in ``sys.modules``, where
    pydantic resolves a model's annotations)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_bm25_baseline(bm25_py: str) -> Any:
    """An older ``agentenv/retrieval/bm25.py`` as a module (``baseline_bm25``), for ``--baseline`` runs.

    Its own imports come from this checkout, except its top-k paths: since they moved to
    ``bm25_topk.py``, a ``bm25_topk.py`` put beside the baseline's ``bm25.py`` (``git show
    REV:agentenv/retrieval/bm25_topk.py``) is the one it imports, so a baseline of a later tree is
    timed with its own search code, not this checkout's.
    """
    from pathlib import Path

    load = load_module
    path = Path(bm25_py)
    topk = path.with_name("bm25_topk.py")
    if not topk.exists():
        return load("baseline_bm25", path)
    real = "agentenv.retrieval.bm25_topk"
    import agentenv.retrieval.bm25_topk  # noqa: F401 - this checkout's, put back below

    ours = sys.modules[real]
    sys.modules[real] = load("baseline_bm25_topk", topk)
    try:
        return load("baseline_bm25", path)
    finally:
        sys.modules[real] = ours
