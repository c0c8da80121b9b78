"""Token-in-token-out: :class:`TokenEnv`, the chat templates it renders with, and the offline Qwen3 tokenizer.

Why one sub-package: these modules are one feature (token-exact
trajectories with loss masks, see ``docs/token-in-token-out.md``) and only
make sense together. The public names are re-exported here, so
``from agentenv.tokens import TokenEnv, qwen3_template`` is the import to use.

* :mod:`~agentenv.tokens.token_env`: ``TokenEnv``, the Gymnasium wrapper;
* :mod:`~agentenv.tokens.rollout`: ``TokenRollout``, one episode's ids, mask and logprobs for a trainer;
* :mod:`~agentenv.tokens.chat_templates`: ``ChatTemplate``, ``qwen3_template``, ``hf_template``;
* :mod:`~agentenv.tokens.qwen3_chat`: the Qwen3 chat format, rendered without Jinja;
* :mod:`~agentenv.tokens.qwen3_tokenizer`: the Qwen3 tokenizer built from a pinned registry package.
"""

from __future__ import annotations

from agentenv.tokens.rollout import TokenRollout
from agentenv.tokens.token_env import (
    ChatTemplate,
    HFTemplate,
    Qwen3Template,
    TemplateNotPrefixStable,
    TokenAction,
    TokenEnv,
    hf_template,
    qwen3_template,
    token_space,
)

__all__ = [
    "ChatTemplate",
    "HFTemplate",
    "Qwen3Template",
    "TemplateNotPrefixStable",
    "TokenAction",
    "TokenEnv",
    "TokenRollout",
    "hf_template",
    "qwen3_template",
    "token_space",
]
