"""A model argument that cannot work is one line naming it, before anything loads or any hub is asked.

Why: a real-model walk found ``--model smollm2-13m`` (a typo) sending the TRL scripts to the model
hub for a minute and ending in two tracebacks, ``device=cuda`` on a CPU build raising torch's
``AssertionError``, ``timeout_s=nan`` reaching the socket, no ``--use-cpu`` on a CPU machine
raising transformers' traceback, and the LoRA merge printing a traceback for a wrong path.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from agentenv.baselines.hf_agent import HFAgentArgs
from agentenv.baselines.llm_agent import LLMAgentArgs
from agentenv.errors import UserInputError
from agentenv.models import local_model
from agentenv.models.lora import main as merge_main


def test_a_misspelt_packaged_name_is_refused_with_the_name_it_resembles() -> None:
    with pytest.raises(
        UserInputError,
        match=r"--model 'smollm2-13m' is not a packaged model name "
        r"\(did you mean 'smollm2-135m'\?\).*fetches nothing from a model hub",
    ):
        local_model("smollm2-13m")
    with pytest.raises(UserInputError, match="--tokenizer 'no/such-model-anywhere'"):
        local_model("no/such-model-anywhere", "--tokenizer")


def test_a_local_directory_is_taken_as_given(tmp_path: Path) -> None:
    assert local_model(str(tmp_path)) == str(tmp_path)


@pytest.mark.parametrize(
    "fields",
    [
        {"timeout_s": math.nan},
        {"timeout_s": 1e18},
        {"timeout_s": 0},
        {"backoff_s": math.nan},
        {"temperature": math.nan},
        {"temperature": -1.0},
    ],
)
def test_llm_agent_numbers_that_cannot_be_a_deadline_or_a_temperature_are_refused(
    fields: dict,
) -> None:
    with pytest.raises(ValueError, match=next(iter(fields))):
        LLMAgentArgs(model="m", base_url="http://127.0.0.1:9", **fields)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA machine accepts device=cuda")
def test_hf_agent_on_cuda_without_a_gpu_names_the_device(tmp_path: Path) -> None:
    with pytest.raises(
        UserInputError, match=r"hf agent: device cuda: torch sees no CUDA GPU here; use device=cpu"
    ):
        HFAgentArgs(model=str(tmp_path), device="cuda")


def test_hf_agent_names_the_packaged_model_a_typo_resembles() -> None:
    with pytest.raises(
        UserInputError,
        match=r"model=smollm2-13m: no such directory \(did you mean the packaged model 'smollm2-135m'\?\)",
    ):
        HFAgentArgs(model="smollm2-13m")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_a_training_script_without_use_cpu_on_a_cpu_machine_says_the_flag(tmp_path: Path) -> None:
    from agentenv.baselines.train_common import run
    from agentenv.baselines.train_sft import Args

    def never(args: Args) -> None:  # the check comes first: nothing is built
        raise AssertionError("built a trainer")

    with pytest.raises(SystemExit, match=r"^error: no CUDA GPU here: pass --use-cpu true"):
        run(Args, never, ["--data", str(tmp_path), "--output-dir", str(tmp_path / "out")])


def test_the_lora_merge_names_a_wrong_path_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert merge_main([str(tmp_path / "nonexist"), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no adapter_config.json" in err and "Traceback" not in err
