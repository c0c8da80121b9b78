"""The multi-agent page's first snippet runs as written: it is what a reader pastes first.

Why: it imported a module that has no ``env()`` and called a policy it never defined.
"""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "envs" / "multiagent.md"


def test_the_first_python_snippet_plays_a_dialogue_and_a_doctor_step() -> None:
    code = re.search(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert code is not None
    scope: dict = {}
    exec(compile(code.group(1), str(PAGE), "exec"), scope)  # noqa: S102 - the page's own code
    assert scope["terminated"] is False and "seizure" in scope["obs"].lower()
    assert scope["env"].agents == []  # the AEC loop ran the dialogue to its end
