"""SFT data from agent episodes: ``agentenv export-sft`` and its parts.

* :mod:`agentenv.data.sft`: :func:`~agentenv.data.sft.export_sft` writes chat
  and token JSONL and a manifest;
* :mod:`agentenv.data.reasoning` and :mod:`agentenv.data.oracle_with_reasoning`: the
  oracle's scripted ``<think>`` lines (templated, not generated);
* :mod:`agentenv.data.filters`: checks that drop bad demonstrations;
* :mod:`agentenv.cli.export_sft`: the ``export-sft`` command.

Nothing here imports torch, TRL or ``datasets``.
"""
