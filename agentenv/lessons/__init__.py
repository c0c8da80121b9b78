"""The lab, apart from the engine it teaches: structured (classic RL on menus) and scratch (an LLM agent trained from scratch on CPU)."""
