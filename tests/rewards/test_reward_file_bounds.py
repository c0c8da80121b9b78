"""Reward config files are read within bounds: a probe's nine-line YAML of nested aliases took
52 s and 10 GB and wrote a 2 GB error message; a file naming itself as its preset recursed until
Python gave up; a folder or device was reported as missing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentenv.rewards.config import resolve_reward

pytest.importorskip("yaml")

LAUGHS = "\n".join(
    ["a: &a [x, x, x, x, x, x, x, x, x]"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]" for i in range(7)]
    + ["weights: *h"]
)


def test_yaml_aliases_are_refused_before_they_expand(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(LAUGHS, encoding="utf-8")
    with pytest.raises(ValueError, match=r"YAML aliases \(\*name\) are not read") as err:
        resolve_reward(bomb)
    assert len(str(err.value)) < 500


def test_a_bad_value_is_shown_cut(tmp_path: Path) -> None:
    long = tmp_path / "long.json"
    long.write_text('{"weights": [' + ", ".join(['"x"'] * 5000) + "]}", encoding="utf-8")
    with pytest.raises(ValueError, match=r"field 'weights'.*characters\)") as err:
        resolve_reward(long)
    assert len(str(err.value)) < 600


def test_a_preset_field_names_a_preset_not_a_file(tmp_path: Path) -> None:
    own = tmp_path / "self.json"
    own.write_text('{"preset": "self.json"}', encoding="utf-8")
    with pytest.raises(ValueError, match="names a preset .* not a file"):
        resolve_reward(own)


def test_a_folder_or_device_is_not_a_reward_file(tmp_path: Path) -> None:
    folder = tmp_path / "r.json"
    folder.mkdir()
    with pytest.raises(ValueError, match="not a regular file"):
        resolve_reward(folder)
    zero = tmp_path / "zero.json"
    os.symlink("/dev/zero", zero)
    with pytest.raises(ValueError, match="not a regular file"):
        resolve_reward(zero)
