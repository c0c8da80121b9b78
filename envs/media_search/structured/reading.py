"""Readers of MediaSearch's public text for its structured menus: the question, its cues, passages, names.

Why a module of its own: everything a structured MediaSearch policy knows comes
through these functions, so the no-leakage promise is checkable here. Each
reader takes a string the env showed the agent (the first user prompt, or a
tool output) and nothing else; none of them is handed a task, an env or
``info``. The patterns follow the documented prompt and tool-output formats
(docs/envs/media_search.md).

Example:
    >>> question_cues("Who directed the film in which A B and C D both appear?")["director"]
    1.0
    >>> parse_passage("Heat (1995). Crime film directed by Michael Mann, starring Al Pacino. Runtime 170 min.")["runtime"]
    170
"""

from __future__ import annotations

import re
from typing import Any

CUES: dict[str, re.Pattern[str]] = {
    "runtime": re.compile(
        r"\bruntime\b|\bhow long\b|\bminutes\b|\bruns? the longest\b|\blonger\b|\bshortest\b", re.I
    ),
    "count": re.compile(r"\bhow many\b", re.I),
    "cast": re.compile(
        r"\bactors?\b|\bin its cast\b|\bstarring\b|\bstars\b|\bfeaturing\b|\bboth\b", re.I
    ),
    "director": re.compile(r"\bwho directed\b|\bdirector\b|\bfilmmaker\b", re.I),
    "writer": re.compile(r"\bwho wrote\b|\bwriter\b|\bscreenwriter\b", re.I),
    "year": re.compile(r"\bwhat year\b|\bwhich year\b|\bin what year\b|\breleased first\b", re.I),
    "comparison": re.compile(r"\bor\b.*\?$|\bhigher\b|\blower\b|\blonger\b|\bfirst:", re.I),
    "superlative": re.compile(
        r"\bhighest\b|\blowest\b|\bbest\b|\bworst\b|\blongest\b|\bshortest\b", re.I
    ),
    "names_a_film": re.compile(r"\b(?:which|what is the|name the)\b.*\bfilm\b", re.I),
}
"""Question-kind cues, read from the wording alone (never from the task's hidden kind)."""


def question_cues(question: str) -> dict[str, float]:
    """1.0 for each cue of :data:`CUES` that the question's wording shows, else 0.0."""
    return {name: 1.0 if pattern.search(question) else 0.0 for name, pattern in CUES.items()}


_PASSAGE = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)
_TITLE_YEAR = re.compile(r"^(.*?) \((\d{4})\)\. (.*)$")
_RUNTIME = re.compile(r"\bRuntime (\d+) min\b")
_NAME = re.compile(
    r"\b(?:[A-Z][\w'’.-]*|de|von|van|der|da|di|le|la)(?:\s+(?:[A-Z][\w'’.-]*|de|von|van|der|da|di|le|la))+"
)
_NOT_A_NAME = re.compile(r"^(?:Which|What|Who|How|Name|In|Among|From|The)\b")


def media_question(prompt: str) -> str:
    """The question of a MediaSearch prompt: the text after ``Question:`` (single-turn) or the whole prompt."""
    head, sep, question = prompt.rpartition("\n\nQuestion: ")
    return question.strip() if sep else prompt.strip()


def media_passages(prompt: str) -> list[str]:
    """The numbered passages of a single-turn MediaSearch prompt, in rank order."""
    head = prompt.rpartition("\n\nQuestion: ")[0]
    return [m.group(2) for m in _PASSAGE.finditer(head)]


def _between(text: str, start: str, stops: tuple[str, ...]) -> str:
    begin = text.find(start)
    if begin < 0:
        return ""
    begin += len(start)
    ends = [i for i in (text.find(stop, begin) for stop in stops) if i >= 0]
    return text[begin : min(ends) if ends else len(text)]


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(", ") if n.strip()]


def parse_passage(passage: str) -> dict[str, Any]:
    """A film record (title, year, directors, writers, cast, runtime) read out of one passage's text.

    The passage format is the catalog document the env shows: ``Title (Year). Genre film directed
    by A, written by B, starring C, D. Runtime N min. ...``; missing parts come back empty.
    """
    match = _TITLE_YEAR.match(passage)
    if not match:
        return {
            "title": passage.partition(" (")[0],
            "year": None,
            "directors": [],
            "writers": [],
            "cast": [],
            "runtime": None,
        }
    title, year, rest = match.group(1), int(match.group(2)), match.group(3)
    runtime = _RUNTIME.search(rest)
    return {
        "title": title,
        "year": year,
        "directors": _names(_between(rest, "directed by ", (", written by ", ", starring ", ". "))),
        "writers": _names(_between(rest, "written by ", (", starring ", ". "))),
        "cast": _names(_between(rest, "starring ", (". Runtime", ". Language", ". "))),
        "runtime": int(runtime.group(1)) if runtime else None,
    }


def person_in_question(question: str) -> str | None:
    """The first run of capitalised words in the question that is not a question opener (a person's name, mostly)."""
    for match in _NAME.finditer(question):
        name = match.group(0)
        if not _NOT_A_NAME.match(name) and not name.endswith(("Film", "Films")):
            return name
    return None


def named_in(question: str, names: list[str]) -> str | None:
    """The first of ``names`` that the question mentions (case-insensitive, whole words)."""
    asked = f" {re.sub(r'[^a-z0-9]+', ' ', question.lower())} "
    for name in names:
        key = re.sub(r"[^a-z0-9]+", " ", name.lower()).strip()
        if key and f" {key} " in asked:
            return name
    return None
