"""Grading MediaSearch answers: the closed grammar over the catalog, the gold text, the first-call component."""
