"""pytest: ``envs.py`` imports ``skyrl_gym``; without the ``skyrl`` extra its doctests are not collected."""

from importlib.util import find_spec

collect_ignore = [] if find_spec("skyrl_gym") else ["envs.py"]
