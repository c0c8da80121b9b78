"""`agentenv export-sft` never mixes two exports: it refuses a non-empty --out unless --overwrite, writes into
a temporary folder beside it and renames that into place, and an interrupted export leaves the old one whole."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tokenizers")

from agentenv.cli.main import main  # noqa: E402
from agentenv.evaluation.agents import make_agent, register_agent, unregister_agent  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _export(out: Path, *extra: str) -> int:
    return main(
        [
            "export-sft",
            "MediaSearch-v0",
            "--episodes",
            "4",
            "--out",
            str(out),
            "--no-progress",
            *extra,
        ]
    )


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_an_existing_export_is_refused_then_replaced_whole_with_overwrite(
    tmp_path: Path, capsys
) -> None:
    out = tmp_path / "sft"
    assert _export(out) == 0
    first = _snapshot(out)
    capsys.readouterr()
    assert _export(out, "--seed", "1") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--overwrite" in err and str(out) in err
    assert _snapshot(out) == first
    assert _export(out, "--seed", "1", "--overwrite") == 0
    assert _snapshot(out) != first and set(_snapshot(out)) == set(first)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sft"]  # no temporary folder left


def test_overwrite_never_replaces_a_folder_that_is_not_an_export(tmp_path: Path, capsys) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "code.py").write_text("x = 1\n", encoding="utf-8")
    assert _export(project, "--overwrite") == 2
    assert "holds files that are not an SFT export" in capsys.readouterr().err
    assert (project / "src" / "code.py").read_text() == "x = 1\n"


class _InterruptedOracle:
    """The oracle, until Ctrl-C arrives in the middle of the third episode."""

    name = "interrupted-oracle"

    def __init__(self) -> None:
        self.inner = make_agent("oracle")
        self.episodes = 0

    def reset(self, obs, info, *, task, rng) -> None:  # noqa: ANN001
        self.episodes += 1
        self.inner.reset(obs, info, task=task, rng=rng)

    def act(self, obs, info) -> str:  # noqa: ANN001
        if self.episodes == 3:
            raise KeyboardInterrupt
        return self.inner.act(obs, info)


def test_an_interrupted_export_leaves_the_old_one_whole(tmp_path: Path, capsys) -> None:
    out = tmp_path / "sft"
    assert _export(out) == 0
    before = _snapshot(out)
    register_agent("interrupted-oracle", _InterruptedOracle)
    try:
        capsys.readouterr()
        assert _export(out, "--agent", "interrupted-oracle", "--overwrite") == 130
    finally:
        unregister_agent("interrupted-oracle")
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "as it was" in err
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sft"]


def test_a_family_outside_agentenv_exports_with_env_args(
    tmp_path: Path, capitals_on_path: Path
) -> None:
    """`module:Id` with --env-arg (the repository's own example family) used to crash on gym.spec."""

    out = tmp_path / "sft"
    assert (
        main(
            [
                "export-sft",
                "capitals.family:Capitals-v0",
                "--episodes",
                "3",
                "--env-arg",
                "max_turns=3",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    assert (out / "manifest.json").exists()


def test_export_sft_takes_your_own_tasks_with_tasks(tmp_path: Path) -> None:
    """``--env-arg tasks=`` said "use --tasks instead", a flag export-sft did not have."""
    import json

    tasks = tmp_path / "mine.jsonl"
    tasks.write_text(
        json.dumps({"question": "Who directed Heat (1995)?", "answer": "Michael Mann"}) + "\n",
        encoding="utf-8",
    )
    assert _export(tmp_path / "sft", "--tasks", str(tasks), "--episodes", "1") == 0
    manifest = json.loads((tmp_path / "sft" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["env_args"]["tasks"] == str(tasks.resolve())
    assert manifest["kept"] == 1
