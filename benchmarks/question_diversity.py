"""How varied and how natural the generated MediaSearch questions are, next to the hand-written casual split.

Why: issue 30 asks generated questions to read like the ones people type. This
prints, for the test split in each question style and for the casual split:

* the share of questions in a casual form (matching none of the template phrasings);
* distinct openings (first two words, lower case) per 100 questions, and
* the type/token ratio of the words, each on 150 questions (both fall with the
  number of questions, so every set is measured at one size), averaged over 20
  seeded draws;
* the share of questions about a named film (their plan opens it with
  ``get_title``) that write its title verbatim, case and all;
* the out-of-fold AUC of the classifier of ``agentenv data shift-check``
  telling the set from the casual split (0.5: indistinguishable), on the whole
  split (subsampled by shift-check to the casual split's size) and on a sample
  with the casual split's kind mix (the hand-written split asks more lookups
  than the generated quotas; matching kinds isolates the phrasing), and against
  the held-out casual questions alone (:data:`HELD_OUT`, kinds matched).

The ``varied`` style was tuned by reading the classifier's top n-grams against the
first :data:`DEVELOPMENT` casual questions only; the rest of the file (130
questions written after the bm25 reader was final) was never read while tuning
it, so the held-out column is the honest figure.

It also writes 100 questions per split (seeded) to ``docs/envs/media_search_questions.md``
with ``--samples``, and the JSONL files it compared to ``--out`` so that
``agentenv data shift-check OUT/casual.jsonl OUT/test-varied.jsonl`` reproduces the AUC.

Usage: ``python benchmarks/question_diversity.py [--samples] [--out DIR]``
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from agentenv.corpora.media.catalog import load_catalog
from agentenv.data.shift_check import shift_check
from agentenv.envs.media_search.questions import templates as tpl
from agentenv.envs.media_search.questions.record import STYLES, Question
from agentenv.envs.media_search.tasks.question_tasks import split_questions

SIZE = 150
DRAWS = 20
"""Samples of :data:`SIZE` questions the openings and type/token ratio are averaged over (they depend on size)."""
SAMPLE = 100
DEVELOPMENT = 111
"""The casual split's first rows (file order), the only ones read while tuning the ``varied`` style."""
HELD_OUT = slice(DEVELOPMENT, None)
"""The casual rows never read while tuning the generator (file lines 112-241)."""
DOC = Path(__file__).resolve().parents[1] / "docs" / "envs" / "media_search_questions.md"


def _template_patterns() -> list[re.Pattern[str]]:
    texts: list[str] = []
    for group in (tpl.LOOKUP, tpl.SUPERLATIVE, tpl.TWO_HOP, tpl.COMPARISON, tpl.COUNT):
        for phrasings in group.values():
            texts += phrasings
    texts += tpl.CONSTRAINT
    out = []
    for text in texts:
        pattern = re.sub(r"\\\{[a-z0-9_]+\\\}", "(.+?)", re.escape(text)).replace("\\ ", r"\s*")
        out.append(re.compile(f"^{pattern}$", re.DOTALL))
    return out


_TEMPLATES = _template_patterns()


def is_template(question: str) -> bool:
    """True when a question reads as one of the template phrasings."""
    return any(p.match(question) for p in _TEMPLATES)


def figures(questions: Sequence[Question], seed: int = 0) -> dict[str, float]:
    """The diversity figures of one question set (see the module docstring)."""
    catalog = load_catalog()
    rng = np.random.default_rng(seed)
    ratios, opening_counts = [], []
    for _ in range(DRAWS):
        sample = [
            questions[int(i)]
            for i in rng.choice(len(questions), min(SIZE, len(questions)), replace=False)
        ]
        words = [w for q in sample for w in re.findall(r"[a-z0-9']+", q.question.lower())]
        ratios.append(len(set(words)) / max(len(words), 1))
        openings = {" ".join(re.findall(r"[a-z0-9']+", q.question.lower())[:2]) for q in sample}
        opening_counts.append(100 * len(openings) / len(sample))
    named = verbatim = 0
    for q in questions:
        films = [s["arguments"]["title_id"] for s in q.plan or () if s["tool"] == "get_title"]
        if q.kind in ("lookup", "comparison") and films:
            named += 1
            verbatim += all(
                (t := catalog.get(f)) is not None and t.title in q.question for f in films
            )
    return {
        "questions": len(questions),
        "casual_form": sum(not is_template(q.question) for q in questions) / len(questions),
        "openings_per_100": float(np.mean(opening_counts)),
        "type_token_ratio": float(np.mean(ratios)),
        "title_verbatim": verbatim / max(named, 1),
    }


def kind_matched(
    questions: Sequence[Question], like: Sequence[Question], seed: int = 0
) -> list[Question]:
    """A seeded sample of ``questions`` with as many of each kind as ``like`` has."""
    rng = np.random.default_rng(seed)
    out: list[Question] = []
    for kind in sorted({q.kind for q in like}):
        pool = [q for q in questions if q.kind == kind]
        need = sum(q.kind == kind for q in like)
        out += [pool[int(i)] for i in rng.choice(len(pool), min(need, len(pool)), replace=False)]
    return out


def _write_rows(path: Path, questions: Sequence[Question]) -> None:
    path.write_text(
        "".join(json.dumps({"question": q.question, "kind": q.kind}) + "\n" for q in questions),
        encoding="utf-8",
    )


def write_samples(path: Path = DOC, seed: int = 0) -> None:
    """100 questions per split of the default style and the casual split, drawn with ``seed``, as Markdown."""
    lines = [
        "# MediaSearch questions: a sample",
        "",
        "100 questions per split, drawn with `numpy.random.default_rng(0)` by "
        "`python benchmarks/question_diversity.py --samples` (default `varied` style; the `casual` split "
        "is hand-written). Each line: kind, question, gold answer.",
        "",
    ]
    for split in ("train", "validation", "test", "casual"):
        questions = split_questions(split)
        rng = np.random.default_rng(seed)
        picked = sorted(
            int(i) for i in rng.choice(len(questions), min(SAMPLE, len(questions)), replace=False)
        )
        lines += [f"## {split}", ""]
        lines += [
            f"{n}. `{questions[i].kind}` {questions[i].question} → {questions[i].answer}"
            for n, i in enumerate(picked, start=1)
        ]
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", action="store_true", help=f"write the samples to {DOC}")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("results/question_diversity"),
        help="folder for the compared JSONL files (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    casual = split_questions("casual")
    _write_rows(args.out / "casual.jsonl", casual)
    held_out = list(casual)[HELD_OUT]
    _write_rows(args.out / "casual-held-out.jsonl", held_out)
    sets = {f"test ({style})": split_questions("test", style) for style in STYLES}
    sets["casual (hand-written)"] = casual
    print(
        f"{'set':24s} {'casual form':>11s} {'openings/100':>12s} {'type/token':>10s} {'title verbatim':>14s} "
        f"{'AUC vs casual [95% CI]':>24s} {'kinds matched':>24s} {'held-out, kinds matched':>24s}"
    )
    for name, questions in sets.items():
        f = figures(questions)
        auc = matched = held = ""
        if "test" in name:
            style = name.split("(")[1].rstrip(")")
            path, same = (
                args.out / f"test-{style}.jsonl",
                args.out / f"test-{style}-kinds-matched.jsonl",
            )
            _write_rows(path, questions)
            _write_rows(same, kind_matched(list(questions), casual))
            c = shift_check(args.out / "casual.jsonl", path, seed=0).classifier
            m = shift_check(args.out / "casual.jsonl", same, seed=0).classifier
            held_path = args.out / f"test-{style}-kinds-matched-held-out.jsonl"
            _write_rows(held_path, kind_matched(list(questions), held_out))
            h = shift_check(args.out / "casual-held-out.jsonl", held_path, seed=0).classifier
            auc = f"{c.auc:.3f} [{c.ci_low:.3f}, {c.ci_high:.3f}]"
            matched = f"{m.auc:.3f} [{m.ci_low:.3f}, {m.ci_high:.3f}]"
            held = f"{h.auc:.3f} [{h.ci_low:.3f}, {h.ci_high:.3f}]"
        print(
            f"{name:24s} {f['casual_form']:11.2f} {f['openings_per_100']:12.1f} {f['type_token_ratio']:10.3f} "
            f"{f['title_verbatim']:14.2f} {auc:>24s} {matched:>24s} {held:>24s}"
        )
    if args.samples:
        write_samples()
        print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
