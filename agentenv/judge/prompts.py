"""Paraphrased judge prompts, and the strict reading of a judge's yes/no reply.

Why several prompts: LLM-as-judge scores shift with small prompt changes, so
one prompt's verdict says little about whether an answer is right. Every
question is put to the judge in several paraphrases; agreement across them
(:func:`agentenv.judge.consistency.judge_consistency`) measures how far the
judge can be trusted. The paraphrases vary the persona, the wording of the
criterion, and the order of the three blocks; all ask for one word, yes or
no, so that the reply can be read without guessing.

Example:
    >>> len(PROMPTS) >= 4 and len({p.name for p in PROMPTS}) == len(PROMPTS)
    True
    >>> messages = PROMPTS[0].messages("Who directed Alien?", "Ridley Scott", "ridley scott")
    >>> [m["role"] for m in messages], "<candidate>\\nRidley Scott\\n</candidate>" in messages[1]["content"]
    (['system', 'user'], True)
    >>> parse_verdict("Yes."), parse_verdict("<think>same person</think> no")
    (True, False)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentenv.judge.verdict_words import YES_NO, read_verdict

_BLOCKS = {
    "question": "<question>\n{question}\n</question>",
    "gold": "<reference>\n{gold}\n</reference>",
    "answer": "<candidate>\n{answer}\n</candidate>",
}


class JudgeReplyError(ValueError):
    """The judge replied with something other than yes or no."""


@dataclass(frozen=True)
class JudgePrompt:
    """One paraphrase: a system instruction, and the order of the data blocks."""

    name: str
    system: str
    order: tuple[str, str, str] = ("question", "gold", "answer")
    closing: str = "Reply with one word: yes or no."

    def messages(self, question: str, answer: str, gold: str) -> list[dict[str, str]]:
        """The chat messages that put one (question, answer, gold) to the judge."""
        values = {"question": question.strip(), "answer": answer.strip(), "gold": gold.strip()}
        blocks = [_BLOCKS[key].format(**{key: values[key]}) for key in self.order]
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": "\n\n".join([*blocks, self.closing])},
        ]


PROMPTS: tuple[JudgePrompt, ...] = (
    JudgePrompt(
        "grader",
        "You grade answers. Compare the candidate answer with the reference answer to the question. "
        "Say yes if the candidate gives the same answer as the reference, ignoring case, punctuation, "
        "articles and formatting; otherwise say no.",
    ),
    JudgePrompt(
        "equivalence",
        "Two answers to one question follow: a reference and a candidate. Decide whether they are "
        "equivalent, that is, whether they name the same title, person or number. Differences of "
        "case, spacing or punctuation do not matter.",
        order=("question", "answer", "gold"),
    ),
    JudgePrompt(
        "teacher",
        "You are a strict teacher marking a quiz against the answer key. The key is given as the "
        "reference. Mark the student's candidate answer right only if it agrees with the key.",
        order=("gold", "question", "answer"),
        closing="Is the candidate right? Reply with one word: yes or no.",
    ),
    JudgePrompt(
        "reader",
        "A careful reader checks whether a response answers a question correctly, using the "
        "reference answer as the truth. Would the reader accept the candidate as the correct answer?",
        order=("question", "answer", "gold"),
    ),
    JudgePrompt(
        "match",
        "Does the candidate answer refer to the same thing as the reference answer? Extra words around "
        "the right answer are fine; a different or additional answer is not.",
        order=("answer", "gold", "question"),
        closing="Answer yes or no, in one word.",
    ),
)

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


def parse_verdict(reply: str) -> bool:
    """``True`` for yes, ``False`` for no; anything else raises :class:`JudgeReplyError`.

    Every prompt asks for one word, so the reply (after any ``<think>`` block) is
    read by the same whole-reply grammar as the lesson's local judge
    (:func:`agentenv.judge.verdict_words.read_verdict`): one yes/no word with
    allow-listed decoration. "No, because yes..." or "CORRECT or INCORRECT" is an
    error, never a guess from its first word.
    """

    verdict = read_verdict(_THINK.sub("", reply), YES_NO)
    if verdict is None:
        raise JudgeReplyError(
            f"judge replied {reply[:200]!r}, which is not one word, 'yes' or 'no'"
        )
    return verdict
