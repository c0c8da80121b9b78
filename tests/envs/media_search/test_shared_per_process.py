"""Every MediaSearch env of a process shares one index, filter index and set of JSON fragments.

Why: a GRPO run keeps 32-256 envs in flight; when each env loaded its own
BM25 index and built its own per-title fragments, sixteen envs held 555 MB.
"""

from __future__ import annotations

import gymnasium as gym

import agentenv  # noqa: F401
from agentenv.engine.actions import tool_call


def test_envs_of_a_process_share_their_read_only_parts() -> None:
    a, b = (
        gym.make("MediaSearch-v0").unwrapped,
        gym.make("MediaSearch-v0", split="validation").unwrapped,
    )
    assert a.retriever is b.retriever
    tools_a, tools_b = (env.tools["search"].fn.__self__ for env in (a, b))
    assert tools_a.index is tools_b.index and tools_a._shared is tools_b._shared
    outputs = []
    for env in (a, b):
        env.reset(seed=0)
        outputs.append(env.step(tool_call("search", query="heat 1995 crime", k=3))[0])
    assert outputs[0] == outputs[1]


def test_single_turn_envs_share_their_passage_texts() -> None:
    """Each extra MediaSearch-SingleTurn-v0 held its own 17k-passage dict (+6.8 MB an env)."""
    envs = [gym.make("MediaSearch-SingleTurn-v0").unwrapped for _ in range(2)]
    prompts = [env.reset(seed=3)[0] for env in envs]
    assert prompts[0] == prompts[1] and "Passages:" in prompts[0]
    assert envs[0]._doc_text is envs[1]._doc_text


def test_search_rows_exist_before_the_first_search() -> None:
    """Read at make, in the parent of an async vector env, so its forked workers share them (written
    lazily instead, they added 9 us to each search of a fresh process)."""
    env = gym.make("MediaSearch-v0").unwrapped
    tools = env.tools["search"].fn.__self__
    assert len(tools._shared.prefixes) == len(env.catalog)


def test_a_later_env_finds_the_loaded_index_without_hashing_the_catalog(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Hashing the 17,472 ids for the index's cache key, in each forked worker, cost 11 MB of private memory."""
    from agentenv.corpora.media.catalog import Catalog
    from agentenv.retrieval.cache import forget_loaded

    first = gym.make("MediaSearch-v0").unwrapped.retriever

    def not_again(self: Catalog) -> None:
        raise AssertionError("the catalog's documents were read again for a loaded index")

    monkeypatch.setattr(Catalog, "documents", not_again)
    assert gym.make("MediaSearch-v0").unwrapped.retriever is first
    monkeypatch.undo()
    forget_loaded()  # as a new process: found again through the cache key, from disk
    again = gym.make("MediaSearch-v0").unwrapped.retriever
    assert again is not first and again.search("heat 1995 crime", 3) == first.search(
        "heat 1995 crime", 3
    )


def test_envs_over_one_split_share_each_task() -> None:
    """A server's pool hands any task to any env: each env making its own Task of a question
    (about 40 µs) made a batched serve-env episode ~10% dearer than the loop's."""
    envs = [gym.make("MediaSearch-v0", split="train").unwrapped for _ in range(3)]
    single = gym.make("MediaSearch-SingleTurn-v0", split="train").unwrapped
    for n, env in enumerate(envs):
        env.reset(seed=n, options={"index": 11})
    assert envs[0].tasks[11] is envs[1].tasks[11] is envs[2].tasks[11] is single.tasks[11]
    validation = gym.make("MediaSearch-v0", split="validation").unwrapped
    assert validation.tasks[11] is not envs[0].tasks[11]
    assert validation.tasks[11].split == "validation" and envs[0].tasks[11].split == "train"
    mine = [
        gym.make(
            "MediaSearch-v0", tasks=[{"question": "how long is heat", "answer": "170"}]
        ).unwrapped
        for _ in range(2)
    ]
    assert mine[0].tasks[0] is not mine[1].tasks[0]  # a user's list: each env's own
    assert mine[0].tasks[0].prompt == "how long is heat"
