"""MediaSearch's scripted agents: the oracle and its spelling variant, the bm25 strategy, the reasoning lines of SFT export, the film-match score."""
