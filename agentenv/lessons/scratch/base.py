"""The base checkpoint: a tokenizer trained on the package's text and a tiny Qwen3 pre-trained to copy.

One command builds it (``python -m agentenv.lessons.scratch.base --out DIR``); the
shipped copy (:func:`shipped_base`) was built that way, and its record
(``base.json``: command, seed, sizes, wall time, sha256 of the weights) says
how. SFT and GRPO (:mod:`agentenv.lessons.scratch.sft`, :mod:`agentenv.lessons.scratch.grpo`)
start from it, offline.

Steps, each reported in ``base.json``:

1. the chat, recall and repeat drills (:mod:`agentenv.lessons.scratch.drills`) on the compact MediaSearch env,
   leaving out the titles of validation and test questions;
2. a byte-level BPE over the catalog prose, the drills and the train questions;
3. a copy stage: pre-training on repeat drills alone, until the model copies
   (induction heads). In a first run on the full mix, where repeat drills were
   8% of the tokens, the loss on the repeated half of a drill was no lower than
   on the first half after 500 steps; on repeat drills alone it starts to fall
   after about 350;
4. pre-training on the prose and all the drills, packed into blocks.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from agentenv.lessons.scratch.drills import (
    DrillMix,
    catalog_prose,
    drill_conversations,
    held_out_title_ids,
    recall_drills,
    repeat_drills,
)
from agentenv.lessons.scratch.model import ModelSize, new_model, parameter_count
from agentenv.lessons.scratch.pretrain import PretrainConfig, pack, pretrain
from agentenv.lessons.scratch.tokenizer import load_tokenizer, train_tokenizer

ENV_ID = "MediaSearch-v0"
#: The env options every from-scratch run uses: short prompts and plain-text tool outputs.
COMPACT = {"compact": True}
SHIPPED = Path(__file__).parent / "checkpoint"
#: The copy stage's settings: a short warm-up, then the usual cosine decay over 600 steps.
COPY_STAGE = PretrainConfig(steps=600, warmup=50)
#: The main stage of the shipped base: 3,000 steps of 16 × 256 tokens (about 50 minutes on 2 cores).
#: At 900 steps the same mix copied titles into ``search`` 3 times in 30, at 3,000 steps (with
#: ``aligned_names``) 10 times (docs/llm-from-scratch.md).
MAIN_STAGE = PretrainConfig(steps=3000)


@dataclass(frozen=True)
class BaseConfig:
    """Everything that decides the base checkpoint."""

    seed: int = 0
    vocab_size: int = 8192
    size: ModelSize = field(default_factory=ModelSize)
    drills: DrillMix = field(default_factory=DrillMix)
    pretrain: PretrainConfig = field(default_factory=lambda: MAIN_STAGE)
    prose_stride: int = 3
    """Read every third film description (copying, not prose, is the skill being taught)."""
    copy_stage: PretrainConfig = field(default_factory=lambda: COPY_STAGE)
    """The copy stage (repeat drills only) before the main pre-training."""
    spaces_apart: bool = False
    """Spaces as tokens of their own, so a name is the same tokens wherever it stands (see
    :func:`~agentenv.lessons.scratch.tokenizer.train_tokenizer`). Off for the shipped base: at the same
    steps it copied worse (docs/llm-from-scratch.md), so GPT-2's pre-tokenizer stays."""
    aligned_names: bool = True
    """A space after every quote, ``>`` and newline before tokenizing (taken away again when
    decoding), so a name copied into a tool call or an answer is the same tokens as where it was
    read, at almost no extra tokens (see :func:`~agentenv.lessons.scratch.tokenizer.train_tokenizer`).
    On for the shipped base; the base before it (GPT-2 pre-tokens, 900 steps) is compared in
    docs/llm-from-scratch.md."""
    init: str | None = None
    """Continue pre-training from this model directory (``save_pretrained`` layout, with its
    tokenizer) instead of a fresh model: longer pre-training without redoing the first run. The
    copy stage is skipped (the model already copies); a new ``seed`` draws new drills."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_base(config: BaseConfig, out: Path, *, log: Any = print) -> dict[str, Any]:
    """Build the tokenizer and pre-train the model into ``out``; resumable (see :func:`pretrain`)."""
    import gymnasium as gym

    started = time.perf_counter()
    if config.init is not None:
        check_init(Path(config.init))
    out.mkdir(parents=True, exist_ok=True)
    env = gym.make(f"agentenv:{ENV_ID}", **COMPACT)
    held_out: set[str] = set()
    for split in ("validation", "test"):
        held_out |= held_out_title_ids(gym.make(f"agentenv:{ENV_ID}", split=split).unwrapped.tasks)
    conversations = list(drill_conversations(env, config.drills, config.seed, frozenset(held_out)))
    recalls = list(recall_drills(env, config.drills.recall, config.seed, frozenset(held_out)))
    repeats = list(repeat_drills(env, config.drills.repeat, config.seed, frozenset(held_out)))
    all_prose = list(catalog_prose(env))
    prose = all_prose[:: config.prose_stride]
    questions = [t.prompt for t in env.unwrapped.tasks]
    tokenizer_dir = out / "model"
    if config.init is not None and not (tokenizer_dir / "tokenizer.json").is_file():
        _copy_tokenizer(Path(config.init), tokenizer_dir)
    if (tokenizer_dir / "tokenizer.json").is_file():
        tokenizer = load_tokenizer(tokenizer_dir)
    else:
        from agentenv.lessons.scratch.chat_template import CHAT_TEMPLATE

        rendered_for_bpe = [_render(c, CHAT_TEMPLATE) for c in conversations[:20_000]]
        tokenizer = train_tokenizer(
            all_prose + rendered_for_bpe + questions,
            vocab_size=config.vocab_size,
            spaces_apart=config.spaces_apart,
            aligned_names=config.aligned_names,
        )
        tokenizer.save_pretrained(tokenizer_dir)
    log(
        f"tokenizer: {len(tokenizer)} tokens; {len(conversations)} chat drills, {len(recalls)} recall drills, "
        f"{len(repeats)} repeat drills, {len(prose)} documents"
    )
    repeat_ids = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in repeats]
    documents = [
        tokenizer(t, add_special_tokens=False)["input_ids"] for t in prose + recalls
    ] + repeat_ids
    documents += [
        tokenizer.apply_chat_template(c, tokenize=True, return_dict=True)["input_ids"]
        for c in conversations
    ]
    blocks = pack(documents, tokenizer.pad_token_id, config.pretrain.block, config.seed)
    log(
        f"pre-training on {blocks.size:,} tokens in {len(blocks)} blocks of {config.pretrain.block}"
    )
    model = starting_model(config, tokenizer)
    prepared = time.perf_counter() - started
    copy_records: list[dict[str, float]] = []
    if config.init is None:
        copy_blocks = pack(repeat_ids, tokenizer.pad_token_id, config.copy_stage.block, config.seed)
        log(f"copy stage on {copy_blocks.size:,} tokens of repeat drills")
        copy_records = pretrain(
            model,
            copy_blocks,
            config.copy_stage,
            out / "copy",
            log=_every_50_steps(log, "copy step"),
        )
    records = pretrain(
        model,
        blocks,
        config.pretrain,
        out / "pretrain",
        log=_every_50_steps(log, "step"),
    )
    model.save_pretrained(tokenizer_dir, safe_serialization=True)
    weights = tokenizer_dir / "model.safetensors"
    record = {
        "command": "python -m agentenv.lessons.scratch.base " + " ".join(sys.argv[1:]),
        "config": asdict(config),
        "init_sha256": None
        if config.init is None
        else _sha256(Path(config.init) / "model.safetensors"),
        "parameters": parameter_count(model),
        "vocab_size": len(tokenizer),
        "drills": len(conversations),
        "recall_drills": len(recalls),
        "repeat_drills": len(repeats),
        "documents": len(prose),
        "tokens": int(blocks.size),
        "steps_this_run": len(copy_records) + len(records),
        "copy_stage_final_loss": copy_records[-1]["loss"] if copy_records else None,
        "final_loss": records[-1]["loss"] if records else None,
        "median_tokens_per_s": sorted(r["tokens_per_s"] for r in records)[len(records) // 2]
        if records
        else None,
        "prepare_s": round(prepared, 1),
        "wall_s": round(time.perf_counter() - started, 1),
        "sha256": {
            "model.safetensors": _sha256(weights),
            "tokenizer.json": _sha256(tokenizer_dir / "tokenizer.json"),
        },
    }
    (out / "base.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def _every_50_steps(log: Any, label: str) -> Any:
    """A :func:`pretrain` callback that logs every 50th step's loss and speed under ``label``."""

    def step_record(r: dict[str, float]) -> None:
        if r["step"] % 50 == 0:
            log(f"{label} {r['step']}: loss {r['loss']:.3f}, {r['tokens_per_s']:.0f} tokens/s")

    return step_record


def check_init(path: Path) -> None:
    """Refuse an ``--init`` that is not a model directory, before minutes of drill building.

    Example:
        >>> check_init(Path("/nonexistent"))
        Traceback (most recent call last):
        ...
        agentenv.errors.UserInputError: --init /nonexistent: no model.safetensors there; give a model directory in save_pretrained layout with its tokenizer, e.g. agentenv/lessons/scratch/checkpoint/model
    """
    from agentenv.errors import UserInputError

    for name in ("model.safetensors", "config.json", "tokenizer.json"):
        if not (path / name).is_file():
            raise UserInputError(
                f"--init {path}: no {name} there; give a model directory in save_pretrained layout "
                "with its tokenizer, e.g. agentenv/lessons/scratch/checkpoint/model"
            )


def starting_model(config: BaseConfig, tokenizer: Any) -> Any:
    """The model pre-training starts from: fresh for ``config.seed``, or ``config.init``'s weights.

    A continued model must share ``tokenizer``'s vocabulary (the tokenizer is copied from it).
    """
    if config.init is None:
        return new_model(tokenizer, config.size, config.seed)
    from transformers import Qwen3ForCausalLM

    from agentenv.errors import UserInputError

    model = Qwen3ForCausalLM.from_pretrained(config.init)
    if len(tokenizer) != model.config.vocab_size:
        raise UserInputError(
            f"--init {config.init}: its model has {model.config.vocab_size} tokens, the tokenizer "
            f"{len(tokenizer)}; use a fresh --out, whose tokenizer is copied from --init"
        )
    return model


def _copy_tokenizer(source: Path, target: Path) -> None:
    """Copy a model directory's tokenizer files, so a continued run tokenizes as its start did."""
    import shutil

    target.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
        if (source / name).is_file():
            shutil.copy2(source / name, target / name)


def _render(conversation: Sequence[dict[str, Any]], template: str) -> str:
    """A drill as plain text for BPE training (the chat template without transformers)."""
    from jinja2 import Environment

    plain = template.replace("{%- generation %}", "").replace("{%- endgeneration %}", "")
    return Environment().from_string(plain).render(messages=conversation)


def shipped_base() -> Path:
    """The directory of the shipped base model and tokenizer (``save_pretrained`` layout)."""
    path = SHIPPED / "model"
    if not (path / "model.safetensors").is_file():
        raise FileNotFoundError(
            f"no shipped base checkpoint in {path}; build one with python -m agentenv.lessons.scratch.base"
        )
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Build the base checkpoint."""
    parser = argparse.ArgumentParser(
        prog="python -m agentenv.lessons.scratch.base", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--out", type=Path, required=True, help="output directory (resumes a run found there)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=MAIN_STAGE.steps, help="pre-training steps")
    parser.add_argument(
        "--copy-steps",
        type=int,
        default=COPY_STAGE.steps,
        help="copy-stage steps (repeat drills only)",
    )
    parser.add_argument(
        "--drills", type=int, default=DrillMix.copy_query, help="chat drills of each kind"
    )
    parser.add_argument("--recall", type=int, default=DrillMix.recall, help="recall drills")
    parser.add_argument("--repeat", type=int, default=DrillMix.repeat, help="repeat drills")
    parser.add_argument(
        "--spaces-apart",
        action=argparse.BooleanOptionalAction,
        default=BaseConfig.spaces_apart,
        help="spaces as tokens of their own (an experiment: off for the shipped base)",
    )
    parser.add_argument(
        "--aligned-names",
        action=argparse.BooleanOptionalAction,
        default=BaseConfig.aligned_names,
        help="a space after every quote, '>' and newline, so copied names keep their tokens (on for the shipped base)",
    )
    parser.add_argument(
        "--init",
        type=Path,
        default=None,
        help="continue pre-training from this model directory (e.g. the shipped base); skips the copy stage",
    )
    parser.add_argument(
        "--learning-rate",
        type=float,
        default=MAIN_STAGE.learning_rate,
        help="peak learning rate of the main stage",
    )
    args = parser.parse_args(argv)
    config = BaseConfig(
        seed=args.seed,
        drills=DrillMix(args.drills, args.drills, args.drills, args.recall, args.repeat),
        pretrain=replace(
            MAIN_STAGE, steps=args.steps, seed=args.seed, learning_rate=args.learning_rate
        ),
        copy_stage=replace(COPY_STAGE, steps=args.copy_steps, seed=args.seed),
        spaces_apart=args.spaces_apart,
        aligned_names=args.aligned_names,
        init=None if args.init is None else str(args.init),
    )
    record = build_base(config, args.out)
    print(json.dumps({k: record[k] for k in ("parameters", "tokens", "final_loss", "wall_s")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
