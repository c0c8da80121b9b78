"""Adapters to training frameworks; each lives in its own module and imports its framework lazily.

* :mod:`agentenv.integrations.trl`: envs as TRL ``GRPOTrainer`` environments,
  and the matching prompt datasets (the ``trl`` extra);
* :mod:`agentenv.integrations.tools_as_methods`: env tools as typed, documented
  methods, the form trainers build tool schemas from;
* :mod:`agentenv.integrations.dataclass_cli`: command-line parsing for the
  typed args dataclasses of the training scripts in ``baselines/``.

Importing this package imports no framework.
"""
