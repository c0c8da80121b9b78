"""GRPO on an agentenv env with TRL: the env's tools are the model's tools, the env's reward is the reward.

Run on a GPU (the model is a path or hub id you supply; nothing is fetched by
the tests)::

    python baselines/train_grpo.py --model Qwen/Qwen3-0.6B --env-id MediaSearch-v0 \\
        --use-vllm true --vllm-mode colocate --output-dir runs/grpo-media

How it fits together:

* :func:`agentenv.integrations.trl.dataset` gives one prompt per task of the
  split (the env's system prompt and the question) with its ``task_id``;
* :class:`agentenv.integrations.trl.AgentEnvFactory` gives TRL one env per
  rollout (a picklable factory, so ``AsyncGRPOTrainer`` can take it too); TRL
  renders its tools into the prompt and runs the model's tool calls against the
  env. The model ends an episode as in ``agentenv eval``: a final message with
  ``<answer>…</answer>``. The factory's ``reward_func`` scores each rollout as
  the env does (``--reward``): the episode return of its assistant messages,
  one env turn per message;
* ``--eval-split validation`` adds an evaluation set; the same factory serves
  its rows (each row names its split and task);
* generation is vLLM (``--use-vllm true``, colocated or server mode) or
  transformers' ``generate``.

Seeding: ``transformers.set_seed`` is called here, in the script, because
model init and sampling use torch's global generators; the library itself
never touches global RNGs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentenv.baselines.train_common import TrainArgs, run


@dataclass
class Args(TrainArgs):
    """GRPO with an agentenv env.

    Besides the shared fields of :class:`~agentenv.baselines.train_common.TrainArgs`
    (model, optimizer, precision, logging), GRPO needs an env to roll out in
    and the rollout settings; the shared defaults suit SFT, so the ones GRPO
    changes come first.
    """

    output_dir: str = "runs/grpo"
    max_steps: int = 500
    """Optimizer steps."""
    learning_rate: float = 1e-6
    per_device_train_batch_size: int = 8
    """Rollouts per device per micro-batch (a multiple of num_generations across devices)."""
    logging_steps: int = 1
    save_steps: int = 100
    env_id: str = "MediaSearch-v0"
    """Registered agentenv env id; multi-turn envs expose their tools to the model."""
    split: str = "train"
    """Split whose tasks are the prompts (never train on 'test')."""
    tasks: int | None = None
    """Use the first N tasks of the split; None uses them all."""
    eval_split: str | None = None
    """Split to evaluate on during training (e.g. 'validation'); None evaluates nothing."""
    eval_tasks: int | None = 64
    """Use the first N tasks of eval_split; None uses them all."""
    eval_steps: int = 100
    """Evaluate every N optimizer steps (with eval_split)."""
    reward: str = "strict"
    """Reward preset or config file: 'strict' (accuracy), 'efficient' (plus tool and turn costs), ..."""
    num_generations: int = 8
    """Rollouts per prompt: the group whose rewards GRPO normalises."""
    max_completion_length: int = 4096
    """Token budget of one rollout after the prompt: the model's turns plus tool results."""
    max_tool_calling_iterations: int | None = 10
    """At most this many rounds of tool calls per rollout (the env's own turn budget also applies)."""
    temperature: float = 1.0
    """Sampling temperature of the rollouts."""
    beta: float = 0.0
    """KL coefficient against the reference model (0 skips loading it)."""
    enable_thinking: bool = True
    """Qwen3 thinking mode in the chat template."""
    use_vllm: bool = False
    """Generate with vLLM instead of transformers."""
    vllm_mode: str = "colocate"
    """'colocate' (vLLM inside the training process) or 'server' (a separate `trl vllm-serve`)."""
    vllm_gpu_memory_utilization: float = 0.3
    """GPU memory share of the colocated vLLM engine."""


def build_trainer(args: Args, callbacks: Sequence[Any] = ()) -> Any:
    """The ``GRPOTrainer`` for ``args`` (not yet trained), so tests can inspect it."""
    from transformers import set_seed
    from trl import GRPOConfig, GRPOTrainer

    from agentenv.integrations.trl import AgentEnvFactory, dataset

    os.environ.setdefault(
        "TRL_EXPERIMENTAL_SILENCE", "1"
    )  # environment_factory is experimental in TRL 1.16
    set_seed(args.seed)
    train_dataset = dataset(args.env_id, args.split, n=args.tasks)
    eval_dataset = (
        dataset(args.env_id, args.eval_split, n=args.eval_tasks) if args.eval_split else None
    )
    factory = AgentEnvFactory(args.env_id, split=args.split, reward=args.reward, seed=args.seed)
    evaluation = (
        {"eval_strategy": "steps", "eval_steps": args.eval_steps}
        if eval_dataset is not None
        else {}
    )
    config = GRPOConfig(
        **args.trainer_options(GRPOConfig),
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        max_tool_calling_iterations=args.max_tool_calling_iterations,
        temperature=args.temperature,
        beta=args.beta,
        chat_template_kwargs={"enable_thinking": args.enable_thinking},
        use_vllm=args.use_vllm,
        vllm_mode=args.vllm_mode,
        vllm_gpu_memory_utilization=args.vllm_gpu_memory_utilization,
        **evaluation,
    )
    return GRPOTrainer(
        **args.trainer_inputs(config, train_dataset, callbacks),
        eval_dataset=eval_dataset,
        environment_factory=factory,
        reward_funcs=factory.reward_func,  # the env's episode return; the env class has no get_reward
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the options, train, save the final model."""
    run(Args, build_trainer, argv)


if __name__ == "__main__":
    main()
