"""Capitals: questions about the 100 countries of ``countries.csv``, with tools (``Capitals-v0``) or retrieved
passages (``Capitals-SingleTurn-v0``). Reward: ``accuracy``, normalized exact match with answer or alias.
Your own questions: ``tasks=`` a JSONL file or a list of rows (``task_from_row``), served as split ``custom``."""

import csv
import functools
import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from agentenv.core import Task, ToolEnv
from agentenv.engine.parsing import Answer
from agentenv.engine.task_rows import check_row_fields, read_task_rows
from agentenv.engine.tools import ToolError, ToolRegistry, tool
from agentenv.errors import UserInputError
from agentenv.retrieval import Retriever, build_retriever

QUESTIONS = {  # task kind, which is also the Country field that answers it -> question
    "capital": "What is the capital of {country}?",
    "country": "Which country has {capital} as its capital?",
    "continent": "On which continent is the country whose capital is {capital}?",
}
SPLITS = ("test", "test", "validation") + ("train",) * 7  # indexed by a hash of the country id
HARD = {"hard": ("test", ("continent",))}
"""The family's own evaluation split (``Family.splits``): split name -> (the split whose countries it
asks about, the question kinds). ``hard`` is the two-hop kind (capital -> country -> continent) on the
test countries, so ``agentenv eval capitals.family:Capitals-v0 --split hard`` needs no line elsewhere."""


class Country(NamedTuple):
    """One row of the table, and a task's ``case`` (privileged: the grader and the oracle read it)."""

    id: str  # ISO 3166-1 alpha-3, the document id
    country: str
    capital: str
    continent: str
    country_aliases: str  # other accepted names, ";"-separated
    capital_aliases: str


@functools.cache
def load_table() -> tuple[tuple[Country, ...], str]:
    """The rows in file order and the sha256 of the CSV bytes, which keys the on-disk index."""
    raw = Path(__file__).with_name("countries.csv").read_bytes()
    return tuple(
        Country(**row) for row in csv.DictReader(raw.decode().splitlines())
    ), hashlib.sha256(raw).hexdigest()


def documents() -> tuple[list[str], list[str], str]:
    """``(ids, texts, checksum)``: the ``capitals`` corpus of ``Family.corpora``, and the env's own index."""
    table, checksum = load_table()
    texts = [
        f"{c.country} ({c.id}) is a country in {c.continent}. Its capital is {c.capital}."
        for c in table
    ]
    return [c.id for c in table], texts, checksum


def normalize(text: str) -> str:
    """Case, accents, punctuation and a leading "the" do not count: ``"Bogotá"`` is ``"bogota"``."""
    text = (
        unicodedata.normalize("NFKD", text)
        .encode("ascii", "ignore")
        .decode()
        .lower()
        .replace(".", "")
    )
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text).split()).removeprefix("the ")


def make_task(country: Country, kind: str, split: str) -> Task:
    """The question is public, the answer is the gold, and the row is the case (it holds the aliases)."""
    return Task(
        prompt=QUESTIONS[kind].format(country=country.country, capital=country.capital),
        gold=getattr(country, kind),
        split=split,
        family="capitals",
        kind=kind,
        case=country,
    )


EXAMPLE = '{"question": "What is the capital of Peru?", "answer": "Lima", "aliases": ["Ciudad de los Reyes"]}'


def task_from_row(row: Mapping[str, Any], where: str) -> Task:
    """A row of the user's task file (``where`` is ``path:line``); its case is the aliases, not a Country."""
    check_row_fields(
        row, where, required=("question", "answer"), optional=("aliases", "kind"), example=EXAMPLE
    )
    if not isinstance(row["question"], str) or not row["question"].strip():
        raise UserInputError(
            f"{where}: field 'question' must be a non-empty string, e.g. {EXAMPLE}"
        )
    aliases = row.get("aliases", [])
    if not isinstance(aliases, list):
        raise UserInputError(f"{where}: field 'aliases' must be a list of strings, e.g. {EXAMPLE}")
    for name, text in [("answer", row["answer"]), *(("aliases", a) for a in aliases)]:
        if not isinstance(text, str) or not normalize(text):  # a gold of "?" would accept "!"
            raise UserInputError(
                f"{where}: field {name!r} must hold strings with letters or digits, e.g. {EXAMPLE}"
            )
    kind = row.get("kind", "custom")
    if "kind" in row and (not isinstance(kind, str) or kind not in QUESTIONS):
        raise UserInputError(
            f"{where}: field 'kind' must be one of {', '.join(map(repr, QUESTIONS))}, or left out"
        )
    return Task(
        prompt=row["question"].strip(),
        gold=row["answer"].strip(),
        split="custom",
        family="capitals",
        kind=kind,
        case=tuple(a.strip() for a in aliases),
        row_id=row.get("id", ""),
    )


def accepted_names(task: Task) -> set[str]:
    """The gold and its aliases, normalized, that the grader accepts."""
    if isinstance(task.case, Country):  # the table's aliases for the kind (none for continents)
        aliases = getattr(task.case, f"{task.kind}_aliases", "").split(";")
    else:  # a row of a task file: its own aliases
        aliases = task.case
    return {normalize(name) for name in (task.gold, *aliases) if name}


class SearchArgs(BaseModel, extra="forbid"):
    query: str = Field(
        min_length=1,
        max_length=500,
        description="Words to look for: a country, a capital, a continent.",
    )
    k: int = Field(default=5, ge=1, le=10, description="How many passages to return.")


class GetCountryArgs(BaseModel, extra="forbid"):
    country: str = Field(
        min_length=1, max_length=100, description="A country id from search (e.g. 'PER') or name."
    )


def make_tools(retriever: Retriever, texts: dict[str, str]) -> ToolRegistry:
    """``search`` and ``get_country``: they read the public table only, never a task."""
    rows = load_table()[0]
    by_name = {
        normalize(n): c for c in rows for n in (c.id, c.country, *c.country_aliases.split(";")) if n
    }

    @tool(SearchArgs)
    def search(args: SearchArgs) -> str:
        """Find countries by words in their passage; returns numbered passages, best first."""
        hits = retriever.search(args.query, args.k)
        return (
            "\n".join(f"[{i}] {texts[h.doc_id]}" for i, h in enumerate(hits, start=1))
            or "No country matches."
        )

    @tool(GetCountryArgs)
    def get_country(args: GetCountryArgs) -> dict[str, str]:
        """The record of one country: name, capital and continent."""
        if (c := by_name.get(normalize(args.country))) is None:
            raise ToolError("no such country in the table; find its id with search")
        return {"id": c.id, "country": c.country, "capital": c.capital, "continent": c.continent}

    return ToolRegistry([search, get_country])


class CapitalsEnv(ToolEnv):
    """Multi-turn with two tools, or (``single_turn=True``) linear RAG with the passages in the prompt."""

    family = "capitals"

    def __init__(
        self,
        *,
        split: str = "train",
        retriever: str | Retriever = "bm25",
        passages: int = 3,
        single_turn: bool = False,
        tasks: str | Path | Sequence[Mapping[str, Any]] | None = None,
        **kwargs: Any,
    ) -> None:
        ids, texts, checksum = documents()
        self.texts, self.passages = dict(zip(ids, texts, strict=True)), passages
        self.corpus_checksums = {"capitals": checksum}  # agentenv eval writes it into summary.json
        self.retriever = build_retriever(
            retriever, texts, ids, corpus_checksum=checksum
        )  # cached on disk by checksum
        base, kinds = HARD.get(split, (split, tuple(QUESTIONS)))
        rows = [
            c
            for c in load_table()[0]
            if SPLITS[int(hashlib.sha256(c.id.encode()).hexdigest(), 16) % 10] == base
        ]
        if tasks is None:  # the split's questions; splits are by country
            served = [make_task(c, kind, split) for c in rows for kind in kinds]
        else:  # your own rows (agentenv eval --tasks FILE), split "custom" as every family's
            served, split = read_task_rows(tasks, task_from_row, example=EXAMPLE), "custom"
        tools = ToolRegistry([]) if single_turn else make_tools(self.retriever, self.texts)
        super().__init__(served, tools, split=split, single_turn=single_turn, **kwargs)
        self.check_reward_components()  # a reward reading a component _grade never reports: refused now

    def _system_prompt(
        self,
    ) -> str:  # the base prompt names the tools; info["tools"] holds their schemas
        intro = (
            "You answer questions about countries from the given passages."
            if self.single_turn
            else None
        )
        return f"{intro or super()._system_prompt()} Answer with only the name asked for, e.g. <answer>Lima</answer>."

    def _task_prompt(self, task: Task) -> str:
        if not self.single_turn:
            return task.prompt
        hits = self.retriever.search(task.prompt, self.passages)  # numbered like search's output
        passages = "\n".join(f"[{i}] {self.texts[h.doc_id]}" for i, h in enumerate(hits, start=1))
        return f"Passages:\n{passages}\n\nQuestion: {task.prompt}"

    def _grade(self, task: Task, answer: Answer | None, episode: Any = None) -> dict[str, float]:
        return {
            "accuracy": float(answer is not None and normalize(answer.text) in accepted_names(task))
        }

    def _graded_components(self) -> frozenset[str]:
        """What ``_grade`` reports: ``check_reward_components`` refuses a reward reading another."""
        return frozenset({"accuracy"})
