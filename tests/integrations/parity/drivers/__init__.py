"""One module per trainer adapter; ``test_trainer_parity.py`` discovers every module in this folder.

The driver contract:

* ``REQUIRES: str`` names the module the driver needs (``"verl"``, ``"verifiers"``, ...); the test
  skips the driver's cases with ``pytest.importorskip(REQUIRES)`` where it is not installed.
* ``run(env_id: str, script: Script) -> ParityRecord`` plays ``script.actions`` (in order, stopping
  when the episode ends) through the library's own code path (its env class, agent loop, server
  and client, rollout function), on the task and seed the script names: reset with
  ``seed=script.seed`` and ``options={"index": script.task_index}`` on ``split=script.split``, as
  ``agentenv eval --seed S`` does for its first episode. Where a model would produce text, the
  script's action text stands in for it; where a model would produce token ids, the ids of
  :func:`..scripts.policy_ids` stand in.
* The record holds what the library reports, not what agentenv computed on the side: the episode's
  reward (the sum of its step rewards), the number of turns, the final transcript in OpenAI chat
  format (the env's ``info["messages"]`` as the library carries them), and, where the library works
  on ids, the whole trajectory's ids and loss mask (else ``None``).

A driver must be cheap: a few seconds for all its cases (build envs once per process).
"""
