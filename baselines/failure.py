"""``AgentFailure``: the agent could not produce an action, for reasons outside the policy.

A model endpoint that is down, times out or answers garbage is not a policy
that chose a bad action, and it must not crash a 1,000-episode evaluation
either. An agent raises :class:`AgentFailure` from ``act`` after its own
bounded retries; the evaluation runner catches it, records the reason in the
episode record (``agent_failure``) and lets the env end the episode without
an answer, so the env's own grader scores it as a failure.
"""

from __future__ import annotations


class AgentFailure(RuntimeError):
    """The agent gave up on this episode; ``reason`` says why (shown in the episode record).

    Example:
        >>> str(AgentFailure("endpoint http://127.0.0.1:8000 returned HTTP 500 three times"))
        'endpoint http://127.0.0.1:8000 returned HTTP 500 three times'
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
