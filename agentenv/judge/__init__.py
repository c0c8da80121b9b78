"""An optional LLM judge, always with its consistency report.

Rewards in agentenv are rule-based. A judge is an extra component behind an
OpenAI-compatible endpoint (:class:`JudgeReward`), asked in several
paraphrased prompts, and :func:`judge_consistency` measures how much its
verdicts move with the prompt (Fleiss' kappa, flip rate) and how often they
agree with the rule-based grader. The command line is
``agentenv judge-consistency`` (:mod:`agentenv.cli.judge_consistency`).

Importing this package makes no request and needs nothing beyond the
standard library.
"""

from __future__ import annotations

from agentenv.judge.agreement import cohen_kappa, fleiss_kappa
from agentenv.judge.client import ChatClient, JudgeEndpointError
from agentenv.judge.consistency import (
    ConsistencyReport,
    JudgeItem,
    items_from_records,
    judge_consistency,
)
from agentenv.judge.prompts import PROMPTS, JudgePrompt, JudgeReplyError, parse_verdict
from agentenv.judge.reward import JudgeReward

__all__ = [
    "PROMPTS",
    "ChatClient",
    "ConsistencyReport",
    "JudgeEndpointError",
    "JudgeItem",
    "JudgePrompt",
    "JudgeReplyError",
    "JudgeReward",
    "cohen_kappa",
    "fleiss_kappa",
    "items_from_records",
    "judge_consistency",
    "parse_verdict",
]
