"""The shipped base checkpoint loads offline, matches its record, and fits the size budget."""

from __future__ import annotations

import hashlib
import json

import pytest

pytest.importorskip("transformers")

from agentenv.lessons.scratch.base import SHIPPED, shipped_base  # noqa: E402
from agentenv.lessons.scratch.model import parameter_count  # noqa: E402
from agentenv.lessons.scratch.tokenizer import load_tokenizer  # noqa: E402


@pytest.fixture(scope="module")
def record() -> dict:
    return json.loads((SHIPPED / "base.json").read_text())


def test_weights_and_tokenizer_are_the_recorded_ones(record) -> None:
    path = shipped_base()
    for name, digest in record["sha256"].items():
        assert hashlib.sha256((path / name).read_bytes()).hexdigest() == digest, name
    assert (path / "model.safetensors").stat().st_size <= 25 * 2**20
    # the record keeps the command as it was run; the module has since moved from
    # agentenv.scratch.base to agentenv.lessons.scratch.base (the layout), same flags
    module = record["command"].split()[2]
    assert module in {"agentenv.lessons.scratch.base", "agentenv.scratch.base"}, module


def test_the_model_loads_offline_and_speaks_the_chat_format(record) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    path = shipped_base()
    tokenizer = load_tokenizer(path)
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
    assert model.config.model_type == "qwen3"
    assert parameter_count(model) == record["parameters"]
    assert len(tokenizer) == record["vocab_size"] == model.config.vocab_size
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Who directed Psycho III?"}],
        tokenize=True,
        add_generation_prompt=True,
        return_dict=True,
    )
    ids = torch.tensor([prompt["input_ids"]])
    with torch.no_grad():
        out = model.generate(
            ids, max_new_tokens=24, do_sample=False, pad_token_id=tokenizer.pad_token_id
        )
    text = tokenizer.decode(out[0, ids.shape[1] :])
    assert text.startswith("<tool_call>"), (
        text
    )  # pre-training taught the drill: search the named title


def test_pre_training_taught_the_model_to_copy() -> None:
    """On unseen repeat drills, the repeated half is far more predictable than the first: induction."""
    import gymnasium as gym
    import torch
    from transformers import AutoModelForCausalLM

    from agentenv.lessons.scratch.drills import repeat_drills

    path = shipped_base()
    tokenizer = load_tokenizer(path)
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True).eval()
    env = gym.make("agentenv:MediaSearch-v0", compact=True)
    first, second = [], []
    for drill in repeat_drills(env, 12, seed=12345):
        listing = drill.split("\n\n")[0]
        split_at = len(tokenizer(listing + "\n\n", add_special_tokens=False)["input_ids"]) - 1
        ids = tokenizer(drill, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids])).logits[0]
        losses = torch.nn.functional.cross_entropy(
            logits[:-1], torch.tensor(ids[1:]), reduction="none"
        )
        first.append(losses[:split_at].mean().item())
        second.append(losses[split_at:].mean().item())
    assert sum(second) / len(second) < sum(first) / len(first) - 1.5, (first, second)


def test_continued_pre_training_starts_from_the_given_weights(tmp_path) -> None:
    """``--init`` starts from a model's own weights and tokenizer, and refuses a folder that is not one."""
    import torch
    from transformers import AutoModelForCausalLM

    from agentenv.errors import UserInputError
    from agentenv.lessons.scratch.base import (
        BaseConfig,
        _copy_tokenizer,
        check_init,
        starting_model,
    )

    path = shipped_base()
    _copy_tokenizer(path, tmp_path / "model")
    tokenizer = load_tokenizer(tmp_path / "model")
    continued = starting_model(BaseConfig(init=str(path)), tokenizer)
    shipped = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
    for (name, a), (_, b) in zip(
        continued.state_dict().items(), shipped.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name
    fresh = starting_model(BaseConfig(), tokenizer)
    assert not torch.equal(fresh.lm_head.weight, shipped.lm_head.weight)
    with pytest.raises(UserInputError, match="--init .*no model.safetensors"):
        check_init(tmp_path)
