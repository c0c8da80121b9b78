"""pytest: ``agent_loop.py`` imports ``verl``; without the ``verl`` extra its doctests are not collected."""

from importlib.util import find_spec

collect_ignore = [] if find_spec("verl") else ["agent_loop.py"]
