"""An action's tool calls share one work budget, and each call's declared work bounds what it renders.

Cost is checked by counters, not wall time: the declared work units
(:attr:`agentenv.engine.tools.Tool.work`) of the calls an action runs never pass the
registry's budget, and no call renders more film entries than it declared, for
hypothesis-generated actions of partial names, wildcards, long lists and
repeated calls.
"""

from __future__ import annotations

import json
import re

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentenv  # noqa: F401 - registers the ids
from agentenv.engine.actions import tool_calls
from agentenv.envs.media_search.tools.film_tools import FindPersonArgs, find_person_work
from agentenv.envs.media_search.tools.person_index import PersonIndex, person_index

BUDGET_ERROR = "Error: this action's work budget is spent"
TOO_BIG = "units) than one action may spend"
NAMES = ["john", "j", "a", "de la", "van", "michael john", "*", "%", "jo*", ".*", "smith smith"]
NAMES += ["Samuel L. Jackson", "John Wayne", "zzyzx", "john " * 39, " ".join("abcdefghij" * 4)]
WORDS = ["the", "love", "man", "john", "war", "night", "1990", "drama", "*", "film"]


@pytest.fixture(scope="module")
def env():
    e = gym.make("MediaSearch-v0").unwrapped
    yield e
    e.close()


def _call(draw_name: str, kind: int, k: int, words: list[str], cast: list[str]) -> tuple:
    if kind == 0:
        return ("find_person", {"name": draw_name})
    if kind == 1:
        return ("search", {"query": " ".join(words)[:500] or "x", "k": k})
    if kind == 2:
        return ("filter_titles", {"cast": cast, "limit": min(k, 25), "sort_by": "title"})
    return ("get_title", {"title_id": "tt1375666"})


calls = st.builds(
    _call,
    st.sampled_from(NAMES),
    st.integers(0, 3),
    st.integers(1, 20),
    st.lists(st.sampled_from(WORDS), max_size=120),
    st.lists(st.sampled_from(NAMES[:6]), max_size=5),
)


def _film_entries(content: str) -> int:
    return len(re.findall(r'"id": "', content))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(calls, min_size=1, max_size=32))
def test_an_action_never_spends_more_than_its_budget(env, action):
    env.reset(seed=0)
    registry = env.tools
    _, _, _, _, info = env.step(tool_calls(action))
    replies = [m for m in info["messages"] if m["role"] == "tool"]
    assert len(replies) == len(action)
    spent = 0
    for (name, arguments), reply in zip(action, replies, strict=True):
        t = registry[name]
        need = t.work(t.args_model(**arguments))
        if reply["content"].startswith(BUDGET_ERROR):
            assert spent + need > registry.action_work_budget >= need
            continue
        if TOO_BIG in reply["content"]:
            assert need > registry.action_work_budget
            continue
        spent += need
        assert _film_entries(reply["content"]) <= need, (name, arguments)
    assert spent <= registry.action_work_budget


def test_a_flood_of_partial_names_runs_what_fits_and_says_why_the_rest_did_not(env):
    env.reset(seed=0)
    _, _, _, _, info = env.step(tool_calls([("find_person", {"name": "john"})] * 32))
    replies = [m["content"] for m in info["messages"] if m["role"] == "tool"]
    ran = [r for r in replies if not r.startswith(BUDGET_ERROR)]
    assert len(ran) == env.tools.action_work_budget // 120 == 8
    assert json.loads(ran[0])["total_people"] == json.loads(ran[-1])["total_people"] > 900
    assert "Send it in a later action" in replies[-1]


def test_a_call_larger_than_the_whole_budget_is_refused_alone(env):
    env.reset(seed=0)
    query = "de la " * 60
    obs, *_ = env.step(tool_calls([("search", {"query": query})]))
    assert obs.startswith("Error: this search call asks for more work (1445 units)")


def test_find_person_work_tells_exact_from_partial(env):
    catalog = env.catalog
    assert find_person_work(FindPersonArgs(name="Christopher Nolan"), catalog) == 90
    assert find_person_work(FindPersonArgs(name="nolan"), catalog) == 120


def test_partial_lookups_walk_at_most_the_shortest_token_list():
    """The index's cost counter: a query walks its rarest token's list, however common the others."""
    index = PersonIndex.build({"john smith": 4, "john doe": 2, "jane doe": 1, "john": 9})
    assert index.postings("john") == 3
    assert index.postings("john doe") == 2
    assert index.postings("john nobody") == 0
    assert index.matching("doe john") == (1, ["john doe"])


def test_the_person_index_survives_its_disk_format():
    index = PersonIndex.build({"ridley scott": 3, "tony scott": 5, "scott glenn": 5})
    again = PersonIndex.decode(*index.encode())
    assert again.order == index.order == ["scott glenn", "tony scott", "ridley scott"]
    assert again.matching("scott") == index.matching("scott") == (3, index.order)
    assert PersonIndex.build({}).matching("scott") == (0, [])
    accented = PersonIndex.build({"penelope cruz": 2, "bjork": 1, "小津 安二郎": 3})
    assert accented.matching("小津") == (1, ["小津 安二郎"]) and accented.matching("bj") == (0, [])


def test_the_film_catalog_index_is_read_back_from_its_cache(env):
    from agentenv.corpora.media.catalog import load_catalog

    catalog = load_catalog()
    built = person_index(catalog)
    person_index.cache_clear()
    loaded = person_index(catalog)
    assert loaded is not built
    assert loaded.matching("john", 8) == built.matching("john", 8)
    assert loaded.title_rank == built.title_rank
    assert max(loaded.postings(t) for t in ("john", "david", "michael")) < 2_000


def test_rare_disease_lookups_share_the_action_budget_too():
    """The search over tool arguments found 32 long look-ups of common words at 31-48 ms an action;
    lookup_phenotype declares its work, so the same action runs what fits and refuses the rest."""
    env = gym.make("RareDiseaseDiagnosis-v0").unwrapped
    env.reset(seed=0)
    text = ("the abnormality of the " * 9)[:200]
    _, _, _, _, info = env.step(
        tool_calls([("lookup_phenotype", {"text": text, "limit": 25})] * 32)
    )
    replies = [m["content"] for m in info["messages"] if m["role"] == "tool"]
    need = env.tools["lookup_phenotype"].work(
        env.tools["lookup_phenotype"].args_model(text=text, limit=25)
    )
    ran = [r for r in replies if not r.startswith(BUDGET_ERROR)]
    assert len(ran) == env.tools.action_work_budget // need < 32
    env.close()


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                WORDS + ["de", "la", "½", "¼", "ﬁlm", "Ǆ", "\u0130x", "\u1dc0", "2\u0301"]
            ),
            st.text(max_size=6),
        ),
        max_size=40,
    ),
    st.lists(st.sampled_from([" ", "_", "-", ".", "/", "'", "", "\u2044", "\xa0"]), min_size=1),
)
def test_a_query_declares_at_least_the_terms_any_tokenizer_reads_from_it(
    words: list[str], separators: list[str]
) -> None:
    """The search over tool arguments found ``de_la_`` x 83 declared as one word (``\\w+``) while
    the index read 166 terms, at 177-396 ms an action: the work bound counts what the tokenizers
    split, whatever joins the words."""
    from agentenv.retrieval.tokenize import DEFAULT_TOKENIZER, Tokenizer, terms_bound

    query = "".join(w + separators[i % len(separators)] for i, w in enumerate(words))
    read = max(
        len(DEFAULT_TOKENIZER(query)),
        *(
            len(Tokenizer(lowercase=lowercase, strip_accents=strip, stopwords=False)(query))
            for lowercase in (True, False)
            for strip in (True, False)
        ),
    )
    assert terms_bound(query) >= read, query


def test_underscored_and_ranking_floods_run_what_fits(env):
    """Two floods the search over tool arguments missed: words joined by ``_`` (one ``\\w+`` word,
    166 index terms) and 32 disease rankings of 50 findings (28-103 ms an action)."""
    env.reset(seed=0)
    flood = [("search", {"query": ("de_la_" * 100)[: 500 - i], "k": 20}) for i in range(32)]
    _, _, _, _, info = env.step(tool_calls(flood))
    replies = [m["content"] for m in info["messages"] if m["role"] == "tool"]
    assert len(replies) == 32 and all(TOO_BIG in r for r in replies)
    rare = gym.make("RareDiseaseDiagnosis-v0").unwrapped
    rare.reset(seed=0)
    _, _, _, _, info = rare.step(
        tool_calls([("lookup_phenotype", {"text": "abnormality of the hand", "limit": 25})])
    )
    found = sorted(set(re.findall(r"HP:\d{7}", info["messages"][-1]["content"])))[:50]
    assert len(found) >= 20
    rank = rare.tools["rank_by_phenotypes"]
    need = rank.work(rank.args_model(hpo_ids=found, k=20))
    _, _, _, _, info = rare.step(
        tool_calls([("rank_by_phenotypes", {"hpo_ids": found, "k": 20})] * 32)
    )
    replies = [m["content"] for m in info["messages"] if m["role"] == "tool"][-32:]
    ran = [r for r in replies if not r.startswith(BUDGET_ERROR)]
    assert len(ran) == rare.tools.action_work_budget // need < 32
    assert all('"ranking"' in r for r in ran)
    rare.close()
