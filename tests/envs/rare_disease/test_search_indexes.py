"""The rare-disease tools' indexes are loaded at make, from checksummed disk caches; no step builds one.

Why: a first ``search_diseases`` or ``lookup_phenotype`` call that built its
index took 0.4-1.4 s inside the step, under the tool's deadline, once per
process (``benchmarks/first_steps.py`` measures it).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import gymnasium as gym
import pytest

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.engine.actions import tool_call
from agentenv.envs.rare_disease.tools import documents, search_indexes
from agentenv.envs.rare_disease.tools.phenotype_lookup import PhenotypeIndex
from agentenv.envs.rare_disease.tools.search_indexes import phenotype_index
from agentenv.storage.paths import home_at

QUERIES = [
    "long slender fingers",
    "seizures",
    "HP:0001250",
    "abnormality of the heart",
    "scrotum",
    "forearm",
    "blue spots xyzzy",
    "",
]


def _refuse(*_: object, **__: object) -> None:
    raise AssertionError("a one-time build ran inside a step")


def test_the_first_tool_steps_build_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    phenotype_index.cache_clear()  # as in a fresh process: make must load what the tools read
    documents.disease_retriever.cache_clear()
    env = gym.make("RareDiseaseDiagnosis-v0", split="test", max_turns=5)
    env.reset(seed=0)
    monkeypatch.setattr(PhenotypeIndex, "build", _refuse)
    monkeypatch.setattr(search_indexes, "cached_phenotype_index", _refuse)
    monkeypatch.setattr(documents, "disease_documents", _refuse)
    monkeypatch.setattr(documents, "disease_retriever", _refuse)
    monkeypatch.setattr(search_indexes, "phenotype_index", _refuse)
    obs, *_ = env.step(
        tool_call("search_diseases", query="tall stature long slender fingers ectopia lentis")
    )
    assert json.loads(obs)["results"], obs
    obs, *_ = env.step(tool_call("lookup_phenotype", text="long slender fingers"))
    assert json.loads(obs)["matches"][0]["id"] == "HP:0001166", obs
    obs, *_ = env.step(tool_call("rank_by_phenotypes", hpo_ids=["HP:0001166", "HP:0001083"]))
    assert json.loads(obs)["ranking"], obs


def test_the_phenotype_index_cache_round_trips_and_rebuilds_a_damaged_entry(
    kb: HpoKnowledgeBase,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    built = phenotype_index(kb)
    builds: list[int] = []

    def build(cls: type[PhenotypeIndex], kb_: HpoKnowledgeBase) -> PhenotypeIndex:
        builds.append(1)
        return built  # the real index of this process, so the test pays no second build

    monkeypatch.setattr(PhenotypeIndex, "build", classmethod(build))
    with home_at(tmp_path):
        first = search_indexes.cached_phenotype_index(kb)
        path = search_indexes.phenotype_index_path(kb)
        assert first is built and len(builds) == 1 and path.is_file()
        loaded = search_indexes.cached_phenotype_index(kb)
        assert len(builds) == 1, "a warm entry must load, not build"
        assert loaded is not built and loaded.state() == built.state()
        for q in QUERIES:
            assert loaded.lookup(q, 10) == built.lookup(q, 10), q
        data = bytearray(path.read_bytes())
        data[-100] ^= 0xFF
        path.write_bytes(bytes(data))
        with caplog.at_level(logging.WARNING):
            search_indexes.cached_phenotype_index(kb)
        assert len(builds) == 2 and "rebuilding" in caplog.text
        assert (
            search_indexes.cached_phenotype_index(kb).state() == built.state() and len(builds) == 2
        )


def test_the_cache_key_changes_with_the_code_that_tokenises(kb: HpoKnowledgeBase) -> None:
    header = search_indexes._header(kb)
    assert header["code_sha256"] == search_indexes.code_checksum()
    assert header["hpo_sha256"] == kb.checksum and header["universe"] == kb.universe


def _reference_lookup(
    index: PhenotypeIndex, kb: HpoKnowledgeBase, text: str, limit: int
) -> list[tuple[str, str]]:
    """The word tiers as the module docstring states them, by plain sets and a sort on _rank_key."""
    from agentenv.envs.rare_disease.tools.normalize import phrase_tokens
    from agentenv.envs.rare_disease.tools.phenotype_lookup import _rank_key

    state, ids = index.state(), kb.graph.ids
    rows = {w: i for i, w in enumerate(state["words"])}
    ptr, flat = state["post_ptr"], state["post_entries"]
    tokens = set(phrase_tokens(text))
    postings = [set(flat[ptr[rows[w]] : ptr[rows[w] + 1]]) if w in rows else set() for w in tokens]
    every = set.intersection(*postings)
    how, chosen = "all words", every
    if not every:
        counts = {e: sum(e in p for p in postings) for p in postings for e in p}
        best = max(counts.values(), default=0)
        how, chosen = (
            "some words",
            ({e for e, c in counts.items() if c == best} if best * 2 >= len(tokens) else set()),
        )
    out: list[tuple[str, str]] = []
    for e in sorted(
        chosen,
        key=lambda e: (
            _rank_key(
                how,
                ids[state["terms"][e]],
                kind=state["kinds"][e],
                n_diseases=int(kb.n_diseases[state["terms"][e]]),
                n_tokens=state["n_tokens"][e],
            ),
            e,
        ),
    ):
        term = ids[state["terms"][e]]
        if term not in [t for t, _ in out]:
            out.append((term, how))
        if len(out) == limit:
            break
    return out


@pytest.mark.parametrize(
    "text", ["abnormality", "abnormal heart shape", "seizures fever", "short fingers purple xyzzy"]
)
def test_the_word_tiers_rank_as_the_docstring_says(kb: HpoKnowledgeBase, text: str) -> None:
    index = phenotype_index(kb)
    got = [(m.id, m.how) for m in index.lookup(text, 10) if m.how != "exact"]
    assert got and got == _reference_lookup(index, kb, text, 10)[: len(got)]
