"""Grading a top-k diagnosis: the closed answer grammar, disease names, the gold text, the reward components."""
