"""Rare-disease agents: the oracle, the bm25 strategy and the phenotype-ranker agent."""
