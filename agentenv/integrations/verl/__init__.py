"""verl: an agent loop that plays agentenv envs on token ids, a custom reward function and a parquet writer.

Why these three: verl trains on rows of a parquet file (``prompt``, ``extra_info``), rolls each row
out with the agent loop its ``agent_name`` column names, and scores it with a reward function. So:

* :mod:`~agentenv.integrations.verl.rows` writes the rows (``agentenv prepare-verl``): one per
  episode of ``agentenv eval``'s plan, so the same ``--seed`` and ``--episodes`` give the same tasks
  and reset seeds;
* :mod:`~agentenv.integrations.verl.agent_loop` registers the ``agentenv`` agent loop (a subclass of
  verl's ``AgentLoopBase``) that plays the row's episode through :class:`~agentenv.tokens.TokenEnv`,
  so the prompt ids, response ids and response mask are exactly TokenEnv's, and the reward is the
  env's own;
* :mod:`~agentenv.integrations.verl.reward` is a ``compute_score`` in verl's custom-reward format.

Nothing here imports verl until the agent loop module is imported (``pip install agentenv[verl]``).
See ``docs/training-with-verl.md``.
"""

AGENT_LOOP = "agentenv"
"""The name the agent loop registers under: the ``agent_name`` column of the rows."""
AGENT_LOOP_QWEN3 = "agentenv_qwen3"
"""The same loop rendering env turns with agentenv's offline Qwen3 chat format instead of the tokenizer's template."""
DATA_SOURCE_PREFIX = "agentenv/"
"""``data_source`` of a row: this prefix and the env id."""
