"""Shipped case plans (:mod:`~.unique_cases`) of the default samplers, so no process samples a whole split to find them.

Keyed by :func:`~.unique_cases.plan_key`; a key that no longer matches (a new
HPO release, a retuned preset) is simply not found, and the plan is computed
and cached on disk instead. ``tests/envs/rare_disease/test_unique_cases.py``
recomputes the train entries (slow) and prints the entry to paste here when it differs.
The plans are of the ``published`` disease mix (:mod:`~.disease_mix`), the default.
"""

from __future__ import annotations

PUBLISHED_PLANS: dict[str, dict[str, list]] = {
    # multi_turn, train (published disease mix, 32,845 cases): 8 redrawn, 0 dropped
    "e615482e5deeb8a5e5eb3a00": {
        "redrawn": [
            [7033, 1],
            [23643, 1],
            [26083, 1],
            [28256, 1],
            [28998, 1],
            [30268, 1],
            [30341, 1],
            [31286, 1],
        ],
        "dropped": [],
    },
    # multi_turn, validation (published disease mix, 815 cases): 0 redrawn, 0 dropped
    "c353001f7f29c05d072e4e49": {
        "redrawn": [],
        "dropped": [],
    },
    # multi_turn, test (published disease mix, 786 cases): 0 redrawn, 0 dropped
    "02c223f9898e79dda1d9a299": {
        "redrawn": [],
        "dropped": [],
    },
    # calibrated, train (published disease mix, 32,845 cases): 5 redrawn, 0 dropped
    "bbf78d23c646454f00e0bbb8": {
        "redrawn": [[7033, 1], [23643, 1], [27987, 1], [30268, 1], [30341, 1]],
        "dropped": [],
    },
    # calibrated, validation (published disease mix, 815 cases): 0 redrawn, 0 dropped
    "f09257661b32ba9b9ecffbdc": {
        "redrawn": [],
        "dropped": [],
    },
    # calibrated, test (published disease mix, 786 cases): 0 redrawn, 0 dropped
    "45f9207d5d0eddbadd1e8b35": {
        "redrawn": [],
        "dropped": [],
    },
}
