"""pytest: this package's modules import ``openenv``; without the ``openenv`` extra their doctests are skipped."""

from importlib.util import find_spec

collect_ignore_glob = [] if find_spec("openenv") else ["*.py"]
