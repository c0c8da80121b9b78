"""Capitals: a complete task family kept outside agentenv (docs/new-family.md); ``capitals.family`` registers it."""
