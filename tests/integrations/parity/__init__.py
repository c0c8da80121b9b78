"""Trainer parity: the same scripted episodes through every trainer adapter, against ``agentenv eval``.

:mod:`.scripts` defines the episodes (per single-agent id: the oracle, a wrong answer, an
invalid call, a multi-call message, a truncation) and computes each one's reference record
through the evaluation runner's own episode loop; :mod:`.drivers` holds one module per adapter
that replays a script through that library's code path. ``test_trainer_parity.py`` crosses them.
"""
