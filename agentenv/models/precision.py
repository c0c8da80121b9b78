"""Which float type a model should run in on this CPU.

Why this exists: bfloat16 is fast only where the CPU has bfloat16 matrix instructions
(``avx512_bf16`` or AMX). Measured on an AVX2-only AMD EPYC (2 cores), a 256x576 by 576x1536
matrix product took 52 ms in float32 and 1.3 s in bfloat16 (25x slower), and SmolLM2-135M's
prefill of 147 tokens took 28 s; on a CPU with bf16 units the same model's prefill of 600 tokens
took 0.6 s in bf16 against 1.9 s in float32. So "bfloat16 on CPU" is a choice made per machine.

Example:
    >>> cpu_dtype("bfloat16", flags={"avx2"}), cpu_dtype("bfloat16", flags={"avx512_bf16"})
    ('float32', 'bfloat16')
    >>> cpu_dtype("float16", flags={"amx_bf16"}), cpu_dtype(None, flags=set())
    ('float32', 'float32')
"""

from __future__ import annotations

import functools
from collections.abc import Collection

__all__ = ["BF16_FLAGS", "cpu_dtype", "cpu_flags", "fast_cpu_bf16"]

BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})
"""``/proc/cpuinfo`` flags of CPUs with bfloat16 matrix instructions."""


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """The first processor's flags from ``/proc/cpuinfo`` (empty where there is none)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def fast_cpu_bf16(flags: Collection[str] | None = None) -> bool:
    """Whether this CPU multiplies bfloat16 matrices in hardware."""
    return bool(BF16_FLAGS & set(cpu_flags() if flags is None else flags))


def cpu_dtype(saved: str | None, *, flags: Collection[str] | None = None) -> str:
    """The dtype to run a checkpoint saved in ``saved`` on this CPU: bfloat16 only where it is fast,
    else float32 (float16 has no fast CPU kernels)."""
    if saved == "bfloat16" and fast_cpu_bf16(flags):
        return "bfloat16"
    return "float32"
