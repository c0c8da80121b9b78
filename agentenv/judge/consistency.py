"""How far a judge can be trusted: agreement across paraphrased prompts and with the rule-based grader.

Why: an LLM judge whose verdict changes when the prompt is reworded is
measuring the prompt, not the answer. :func:`judge_consistency` puts every
answer of an ``episodes.jsonl`` (written by ``agentenv eval``) to the judge in
each paraphrase and reports:

* ``fleiss_kappa``: chance-corrected agreement across the prompts (Fleiss 1971);
* ``flip_rate``: the fraction of answers whose verdict changes with the prompt;
* ``rule_agreement`` and ``rule_kappa``: agreement of the judge's majority
  verdict with the rule-based ``accuracy`` (fraction, and Cohen's kappa); a tie
  between prompts counts as "no", since an undecided judge grants no credit;
* per prompt: the yes rate and the agreement with the rules.

Episodes without an ``<answer>`` (truncated) have nothing to judge and are
counted in ``skipped``. The gold is shown to the judge as its family renders it
(``gold_text``, usually :func:`agentenv.judge.gold.family_gold_text` of the
run's env id); a gold that is already text needs none. The prompts ask whether two answers are the same, which
suits single answers (MediaSearch); for a ranked top-k list the rule-based
``hit@k`` is the better judge, and the report will show a low agreement.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentenv.judge.agreement import cohen_kappa, fleiss_kappa
from agentenv.judge.gold import GoldText, gold_as_text
from agentenv.judge.reward import JudgeReward

_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


@dataclass(frozen=True)
class JudgeItem:
    """One answer to judge, with the rule-based grader's verdict on it."""

    task_id: str
    question: str
    answer: str
    gold: str
    rule_correct: bool


@dataclass(frozen=True)
class ConsistencyReport:
    """Agreement of a judge with itself across prompts, and with the rules."""

    n_items: int
    skipped: int
    prompts: tuple[str, ...]
    fleiss_kappa: float
    flip_rate: float
    rule_agreement: float
    rule_kappa: float
    yes_rate: dict[str, float]
    prompt_rule_agreement: dict[str, float]
    flipped: tuple[str, ...] = field(default=())
    """Task ids of the answers whose verdict changed with the prompt."""

    def stable(self, min_kappa: float = 0.8, max_flip_rate: float = 0.05) -> bool:
        """Whether the judge is consistent enough to be used; an undefined kappa needs no flips."""
        kappa_ok = (
            self.fleiss_kappa >= min_kappa
            if not math.isnan(self.fleiss_kappa)
            else self.flip_rate == 0
        )
        return kappa_ok and self.flip_rate <= max_flip_rate

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; ``nan`` becomes ``None``."""
        return {
            k: (None if isinstance(v, float) and math.isnan(v) else v)
            for k, v in asdict(self).items()
        }

    def format(self) -> str:
        """A short plain-text report."""
        lines = [
            f"items judged: {self.n_items} (skipped without an answer: {self.skipped}); prompts: {len(self.prompts)}",
            f"Fleiss' kappa across prompts: {_fmt(self.fleiss_kappa)}",
            f"flip rate (verdict changes with the prompt): {self.flip_rate:.3f}",
            f"majority verdict vs rule-based accuracy: agreement {self.rule_agreement:.3f}, "
            f"Cohen's kappa {_fmt(self.rule_kappa)}",
            "",
            f"{'prompt':<14}{'yes rate':>10}{'agrees with rules':>20}",
        ]
        lines += [
            f"{name:<14}{self.yes_rate[name]:>10.3f}{self.prompt_rule_agreement[name]:>20.3f}"
            for name in self.prompts
        ]
        return "\n".join(lines)


def judge_consistency(
    records: Iterable[Mapping[str, Any]],
    judge: JudgeReward,
    *,
    gold_text: GoldText | None = None,
    workers: int = 1,
) -> ConsistencyReport:
    """Judge every answered record with every prompt of ``judge`` and measure the agreement.

    ``gold_text`` renders a non-text gold for the judge (see :func:`items_from_records`).
    """
    items, skipped = items_from_records(records, gold_text=gold_text)
    if not items:
        raise ValueError(f"no answered episodes to judge ({skipped} skipped without an <answer>)")

    def ask(item: JudgeItem) -> tuple[bool, ...]:
        return judge.verdicts(item.question, item.answer, item.gold)

    if workers > 1:
        with ThreadPoolExecutor(workers, thread_name_prefix="agentenv-judge") as pool:
            votes = list(pool.map(ask, items))
    else:
        votes = [ask(item) for item in items]
    names = tuple(p.name for p in judge.prompts)
    rules = [item.rule_correct for item in items]
    majority = [2 * sum(v) > len(v) for v in votes]
    flipped = tuple(item.task_id for item, v in zip(items, votes, strict=True) if len(set(v)) > 1)
    return ConsistencyReport(
        n_items=len(items),
        skipped=skipped,
        prompts=names,
        fleiss_kappa=fleiss_kappa(votes) if len(names) > 1 else math.nan,
        flip_rate=len(flipped) / len(items),
        rule_agreement=_agreement(majority, rules),
        rule_kappa=cohen_kappa(majority, rules),
        yes_rate={n: sum(v[i] for v in votes) / len(votes) for i, n in enumerate(names)},
        prompt_rule_agreement={
            n: _agreement([v[i] for v in votes], rules) for i, n in enumerate(names)
        },
        flipped=flipped,
    )


def items_from_records(
    records: Iterable[Mapping[str, Any]], *, gold_text: GoldText | None = None
) -> tuple[list[JudgeItem], int]:
    """The answered episodes of ``agentenv eval`` records, and how many had no answer.

    A gold that is not a str is rendered with ``gold_text`` (the family's, e.g.
    ``family_gold_text("MediaSearch-v0")``); without one such a gold is an error.
    """
    items, skipped = [], 0
    for index, record in enumerate(records):
        where = f"record {index} (task {record.get('task_id', '?')})"
        for key in ("task_id", "reward_components", "gold", "messages"):
            if key not in record:
                raise ValueError(
                    f"{where}: missing key {key!r}; expected an episodes.jsonl from `agentenv eval`"
                )
        if "accuracy" not in record["reward_components"]:
            raise ValueError(f"{where}: reward_components has no 'accuracy'")
        messages = record["messages"]
        question = next((m.get("content") or "" for m in messages if m.get("role") == "user"), None)
        said = [m.get("content") or "" for m in messages if m.get("role") == "assistant"]
        answers = _ANSWER.findall(said[-1]) if said else []
        if question is None or not answers:
            skipped += 1
            continue
        items.append(
            JudgeItem(
                task_id=str(record["task_id"]),
                question=question,
                answer=answers[-1].strip(),
                gold=gold_as_text(record["gold"], gold_text, where),
                rule_correct=float(record["reward_components"]["accuracy"]) >= 0.5,
            )
        )
    return items, skipped


def read_episodes(path: str | Path) -> list[dict[str, Any]]:
    """The records of an ``episodes.jsonl``; a bad line names its number.

    Read as ``leaderboard`` reads a run (:mod:`agentenv.evaluation.run_files`): a FIFO or device is
    refused before it is opened and a line is read within a bound, so a wrong ``--episodes`` path
    fails in one line instead of hanging or filling memory.

    Raises:
        RunFileError: not a regular file, a line too long, not JSON or not an object (naming the line).
    """
    from agentenv.evaluation.run_files import iter_lines, parse_object

    return [
        parse_object(raw, f"{path} line {number}", "an episode record")
        for number, raw in iter_lines(Path(path), "an episode record written by `agentenv eval`")
        if raw.strip()
    ]


def _agreement(a: Sequence[bool], b: Sequence[bool]) -> float:
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def _fmt(value: float) -> str:
    return "undefined (every verdict the same)" if math.isnan(value) else f"{value:.3f}"
