"""``hybrid-minilm``'s MiniLM part reads a bounded share of an agent's query."""

from __future__ import annotations


def test_minilm_reads_at_most_its_share_of_a_long_query() -> None:
    """An agent's 500-character query would cost MiniLM ~90 ms; it reads the first 160 characters."""
    from agentenv.envs.media_search.tools.corpus import MINILM_QUERY_CHARS, minilm_search_query

    long_query = "a heist film set in a casino with a long elaborate plan " * 9
    read = minilm_search_query(long_query)
    assert read is not None and len(read) <= MINILM_QUERY_CHARS
    assert long_query.startswith(read)
    assert minilm_search_query("who wrote juno?") == "who wrote juno?"
