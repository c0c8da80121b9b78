"""verl's (and SkyRL's) training rows for agentenv episodes, and the parquet file they read them from.

A verl row (``verl.utils.dataset.RLHFDataset``) carries ``prompt`` (chat messages; verl filters and
logs by it, the agent loop renders its own from the env), ``data_source``, ``agent_name`` (which
agent loop rolls it out), ``reward_model.ground_truth`` and ``extra_info``. Here ``extra_info`` holds
the episode (env id, split, task index and id, reset seed, env kwargs: see
:mod:`agentenv.integrations.row_episodes`) and ``ground_truth`` the task id: the gold answer stays
inside the env, which grades.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentenv.errors import UserInputError
from agentenv.integrations.row_episodes import EnvPool, EpisodeSpec, first_messages
from agentenv.integrations.verl import AGENT_LOOP, DATA_SOURCE_PREFIX

ROW_SEED_MAX = 2**63 - 1
"""The largest reset seed a row holds: parquet stores it as int64, and
:meth:`~agentenv.integrations.row_episodes.EpisodeSpec.from_fields` reads back no larger."""
ROW_COLUMNS = frozenset({"data_source", "prompt", "extra_info"})
"""Columns every row file of :func:`write_parquet` has (verl's and SkyRL's alike)."""


def verl_row(spec: EpisodeSpec, pool: EnvPool, *, agent_loop: str = AGENT_LOOP) -> dict[str, Any]:
    """One row: the episode's opening messages as ``prompt``, the episode in ``extra_info``."""
    messages, _ = first_messages(spec, pool)
    return {
        "data_source": DATA_SOURCE_PREFIX + spec.env_id,
        "agent_name": agent_loop,
        "prompt": [{"role": m["role"], "content": m["content"]} for m in messages],
        "ability": "tool-use",
        "reward_model": {"style": "rule", "ground_truth": spec.task_id},
        "extra_info": {**spec.fields(), "index": spec.episode},
    }


def skyrl_row(spec: EpisodeSpec, pool: EnvPool) -> dict[str, Any]:
    """The same row for SkyRL: ``env_class`` names :mod:`agentenv.integrations.skyrl`'s env, ``reward_spec``
    replaces ``reward_model``, ``extra_info`` (the episode) reaches the env among its extras."""
    from agentenv.integrations.skyrl import PREFIX

    row = verl_row(spec, pool)
    del row["agent_name"], row["reward_model"]
    return {
        **row,
        "env_class": PREFIX + spec.env_id,
        "reward_spec": {"method": "rule", "ground_truth": spec.task_id},
    }


def parquet_modules() -> tuple[Any, Any]:
    """``pyarrow`` and ``pyarrow.parquet``, or a one-line error naming the extra that installs them."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as err:
        raise UserInputError("writing parquet needs pyarrow: pip install 'agentenv[verl]'") from err
    return pa, pq


def holds_rows(path: Path) -> bool:
    """Whether ``path`` is a parquet file with the columns of rows :func:`write_parquet` wrote.

    Why: ``prepare-verl --overwrite`` may replace its own earlier rows, never another parquet
    file (a data set of the user's) that happens to be named as ``--out``. Only the footer is read.
    """
    _, pq = parquet_modules()
    try:
        names = set(pq.read_schema(path).names)
    except (OSError, ValueError):  # pyarrow's ArrowInvalid is a ValueError: not parquet at all
        return False
    return ROW_COLUMNS <= names


def write_parquet(rows: Iterable[dict[str, Any]], path: Path) -> int:
    """Write rows to ``path`` (pyarrow, installed with the verl extra); returns the row count."""
    pa, pq = parquet_modules()
    table = pa.Table.from_pylist(list(rows))
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return table.num_rows
