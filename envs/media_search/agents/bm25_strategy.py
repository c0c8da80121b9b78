"""The ``bm25`` baseline's MediaSearch strategy: read the question, search with a rewritten query, verify, answer.

It is the floor every retrieval-augmented policy must clear, and it must
survive questions as people ask them, not only as a template words them
(issue 30: the old one-search-top-hit agent scored 0.48 on the generated test
split and 0.05-0.17 on hand-written questions). It is the family's
``Family.bm25``; the generic ``bm25`` agent
(:class:`agentenv.baselines.bm25_agent.BM25Agent`) delegates to it.

The question is read by :func:`agentenv.envs.media_search.questions.reading.read_question`
(shared with the structured menus and ``check-tasks``): what it asks for, and
a search query without its question words, with its quoted and capitalised
spans, years and content words. Then, in ``MediaSearch-v0``:

* a film's field or a film (``title``, ``director``, ``writer``, ``year``,
  ``runtime``, ``cast``): ``search`` with the rewritten query, ``get_title`` on
  the top :data:`VERIFY` hits in one turn, the best fit by
  :func:`agentenv.envs.media_search.agents.film_match.match_score`, and the field asked for (for an
  "A or B" cast question, the option in its cast);
* ``compare`` ("which is older, A or B"): one ``search`` per option, the best
  fit of each opened, and the one with the smaller or larger year, runtime or
  rating;
* ``superlative``: one ``filter_titles`` by the genre, year or decade and
  runtime cap the question names, sorted as it asks; the first result;
* ``count``: ``find_person`` on the words left once the question words, genre
  and years are taken out (a partial name finds the full one), then a
  ``filter_titles`` count by that person's role, years and genre (or the
  person's own total).

In ``MediaSearch-SingleTurn-v0`` the prompt holds the passages; the public
catalog (:func:`agentenv.corpora.media.catalog.load_catalog`) acts as the reader that
turns a passage into a record, the best-fitting passage is chosen the same
way, and its field is the answer (comparisons and counts answer the best
passage's title: one record cannot answer them).

It reads only what a policy sees (the observation and ``info``) and is never
handed the task. Everything is deterministic; there is no random choice.

Example:
    >>> question_field("Who directed The Thing?"), question_field("How many minutes does Heat run?")
    ('director', 'runtime')
    >>> question_field("when was boyhood released (year)?")
    'year'
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agentenv.core import Task
from agentenv.engine.actions import answer, tool_call, tool_calls
from agentenv.envs.media_search.agents.film_match import match_score
from agentenv.envs.media_search.questions.reading import QuestionReading, fold, read_question
from agentenv.evaluation.agents import UnsupportedEnv

SEARCH_K = 20
"""Hits each search asks for (the tool's maximum): the film a casual question means is often not the top hit."""
VERIFY = 5
"""Search hits opened with ``get_title`` to pick the film the question means, when the agent's args name no ``k``."""
COMPARE_VERIFY = 3
"""Hits opened per option of a comparison."""
NOTHING = "no film found"


def question_field(question: str) -> str:
    """What a question asks for, from its meaning (see :func:`agentenv.envs.media_search.questions.reading.read_question`)."""
    return read_question(question).asks


def dated(record: Mapping[str, Any]) -> str:
    """A film record's answer as ``Title (Year)``: the year makes a title that several films share
    readable by the grader, and is accepted for every title.

    Example:
        >>> dated({"title": "Walking Tall", "year": 2004}), dated({"title": "Heat"})
        ('Walking Tall (2004)', 'Heat')
    """
    title = str(record.get("title", ""))
    return f"{title} ({record['year']})" if isinstance(record.get("year"), int) else title


def field_answer(record: Mapping[str, Any], reading: QuestionReading) -> str:
    """The answer a film record gives to the question: the field asked for, else the film itself.

    Example:
        >>> film = {"title": "Heat", "year": 1995, "runtime": 170, "directors": ["Michael Mann"],
        ...         "writers": [], "cast": ["Al Pacino", "Robert De Niro"]}
        >>> field_answer(film, read_question("heat, what year")), field_answer(film, read_question("who wrote heat"))
        ('1995', 'Heat (1995)')
        >>> field_answer(film, read_question("was tom hanks or al pacino in heat?"))
        'Al Pacino'
    """
    asks = reading.asks
    if asks == "director" and record.get("directors"):
        return str(record["directors"][0])
    if asks == "writer" and record.get("writers"):
        return str(record["writers"][0])
    if asks in ("year", "runtime") and record.get(asks) is not None:
        return str(record[asks])
    if asks == "cast" and record.get("cast"):
        cast = {fold(str(name)): str(name) for name in record["cast"]}
        for option in reading.options or ():
            if fold(option) in cast:
                return cast[fold(option)]
        return str(record["cast"][0])
    return dated(record)


# ------------------------------------------------------------------ reading the env's text

_PASSAGE = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)
_HEADER = re.compile(r"^\[(search|filter_titles|get_title|find_person)\]\n", re.MULTILINE)


def passages_and_question(prompt: str) -> tuple[list[str], str]:
    """Split a single-turn MediaSearch prompt into its passages (in rank order) and its question.

    Example:
        >>> passages_and_question("Passages:\\n[1] Heat (1995). Crime film.\\n\\nQuestion: Who directed Heat?")
        (['Heat (1995). Crime film.'], 'Who directed Heat?')
    """
    head, _, question = prompt.rpartition("\n\nQuestion: ")
    return [m.group(2) for m in _PASSAGE.finditer(head)], question.strip()


def tool_outputs(obs: str) -> list[Any]:
    """The outputs of one turn's calls as data (``None`` for an error or unreadable output), in call order."""
    parts = _HEADER.split(obs)
    if len(parts) < 3:
        return [_data(obs)]
    return [_data(text.strip()) for text in parts[2::2]]


def _data(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def best_record(
    reading: QuestionReading, records: Sequence[Mapping[str, Any] | None]
) -> Mapping[str, Any] | None:
    """The record that fits the question best (:func:`match_score`); the earlier one on a tie."""
    best, best_score = None, -1e9
    for rank, record in enumerate(records):
        if not isinstance(record, Mapping) or "title" not in record:
            continue
        score = match_score(reading, record, rank)
        if score > best_score:
            best, best_score = record, score
    return best


def shortlist(
    reading: QuestionReading, hits: Sequence[Mapping[str, Any]], n: int = VERIFY
) -> list[Mapping[str, Any]]:
    """The ``n`` search hits worth opening: ranked by :func:`match_score` on what a hit shows (title, year,
    directors), so the film a question names is opened even when search ranks it tenth."""
    order = sorted(range(len(hits)), key=lambda i: (-match_score(reading, hits[i], i), i))
    picked = [hits[i] for i in order[:n]]
    if hits and n > 1 and all(h is not hits[0] for h in picked):
        # search's own first choice takes the last place: the hits show no cast, so for a question
        # that lists the cast, search's ranking is the better guess
        picked[-1] = hits[0]
    return picked


def name_candidates(rest: str, limit: int = 4) -> list[str]:
    """The runs of two or three adjacent words of ``rest``: where a name is, when the whole of it finds
    nobody because a word beside the name is no part of it ("damien chazelle listed").

    Example:
        >>> name_candidates("damien chazelle listed")
        ['damien chazelle', 'chazelle listed']
    """
    words = rest.split()
    runs = [" ".join(words[i : i + 2]) for i in range(len(words) - 1)]
    runs += [" ".join(words[i : i + 3]) for i in range(len(words) - 2)]
    return [r for r in dict.fromkeys(runs) if r != rest][:limit]


def named_person(
    people: Sequence[Mapping[str, Any]], rest: str, role: str, *, whole: bool = False
) -> Mapping[str, Any] | None:
    """The person ``rest`` names: one whose whole name is in it (the longest), else (unless ``whole``)
    the one with the most credits in ``role``; ``None`` for no one.

    Example:
        >>> people = [{"name": "Damien Chazelle", "totals": {"directed": 2}}]
        >>> named_person(people, "damien chazelle listed", "directed", whole=True)["name"]
        'Damien Chazelle'
        >>> named_person(people, "chazelle listed", "directed", whole=True) is None
        True
    """
    if not people:
        return None
    words = f" {fold(rest)} "
    named = [p for p in people if f" {fold(str(p.get('name', '')))} " in words]
    if named:
        return max(named, key=lambda p: len(fold(str(p.get("name", "")))))
    if whole:
        return None
    return max(people, key=lambda p: ((p.get("totals") or {}).get(role, 0), -people.index(p)))


# ------------------------------------------------------------------ the strategy


class MediaSearchBM25:
    """Read, search, verify, answer; see the module docstring.

    ``args`` are the bm25 agent's knobs; only ``k`` is read: how many search hits are opened (default 5).
    """

    name = "bm25"

    def __init__(self, args: Any = None) -> None:
        self.k = int(getattr(args, "k", VERIFY))
        self._single = False
        self._prompt = ""
        self._reading = read_question("")
        self._stage = ""
        self._doc_ids: dict[str, str] | None = None
        self._opened: list[list[str]] = []

    def reset(
        self,
        obs: str,
        info: Mapping[str, Any],
        *,
        task: Task | None = None,
        rng: np.random.Generator | None = None,
    ) -> None:
        tools = {t["function"]["name"] for t in info.get("tools") or ()}
        users = [m["content"] for m in info.get("messages", ()) if m.get("role") == "user"]
        self._prompt = users[0] if users else obs
        if {"search", "get_title"} <= tools:
            self._single = False
        elif not tools and "Passages:" in self._prompt and "\n\nQuestion: " in self._prompt:
            self._single = True
        else:
            raise UnsupportedEnv(
                "the bm25 agent plays MediaSearch-v0 (search, get_title) and MediaSearch-SingleTurn-v0 (passages); "
                f"this env offers tools {sorted(tools) or 'none'} and its prompt has no passages"
            )
        self._filter = "filter_titles" in tools
        self._people = "find_person" in tools
        question = passages_and_question(self._prompt)[1] if self._single else self._prompt
        self._reading = read_question(question)
        self._stage = "start"

    def act(self, obs: str, info: Mapping[str, Any]) -> str:
        if self._single:
            return self._answer_from_passages()
        handler = getattr(self, f"_{self._stage}")
        return handler(obs)

    # -------------------------------------------------------------- multi-turn stages

    def _start(self, obs: str) -> str:
        r = self._reading
        if r.asks == "compare" and r.options:
            self._stage = "open_options"
            return tool_calls(("search", {"query": o[:500], "k": SEARCH_K}) for o in r.options)
        if r.asks == "superlative" and self._filter and r.genre and (r.years or r.years_between):
            self._stage = "read_top"
            return tool_call("filter_titles", **self._group_filter(), limit=3)
        if r.asks == "superlative" and self._filter and self._people and r.rest:
            self._stage = "rank_person"
            return self._find_people()
        if r.asks == "count" and self._people and r.rest:
            self._stage = "count_person"
            return self._find_people()
        self._stage = "open_hits"
        return tool_call("search", query=r.query, k=SEARCH_K)

    def _open_hits(self, obs: str) -> str:
        hits = self._hits(tool_outputs(obs)[0])
        if not hits:
            return answer(NOTHING)
        self._stage = "pick"
        return tool_calls(
            ("get_title", {"title_id": str(h["id"])})
            for h in shortlist(self._reading, hits, self.k)
        )

    def _pick(self, obs: str) -> str:
        record = best_record(self._reading, tool_outputs(obs))
        return answer(field_answer(record, self._reading) if record else NOTHING)

    def _open_options(self, obs: str) -> str:
        outputs = tool_outputs(obs)
        options = self._reading.options or ()
        self._opened = [
            [str(h["id"]) for h in shortlist(read_question(o), self._hits(out), COMPARE_VERIFY)]
            for o, out in zip(options, outputs, strict=False)
        ]
        if len(self._opened) != 2 or not all(self._opened):
            return answer(NOTHING)
        self._stage = "compare"
        return tool_calls(("get_title", {"title_id": i}) for ids in self._opened for i in ids)

    def _compare(self, obs: str) -> str:
        outputs = tool_outputs(obs)
        split = len(self._opened[0])
        options = self._reading.options or ("", "")
        picked = [
            best_record(read_question(o), part)
            for o, part in zip(options, (outputs[:split], outputs[split:]), strict=True)
        ]
        records = [r for r in picked if r is not None]
        key, order = self._reading.sort or ("rating", "desc")
        valued = [
            (r[key], i, r) for i, r in enumerate(records) if isinstance(r.get(key), (int, float))
        ]
        if not valued:
            return answer(dated(records[0]) if records else NOTHING)
        chosen = (max if order == "desc" else min)(valued, key=lambda v: (v[0], -v[1]))
        return answer(dated(chosen[2]))

    def _find_people(self) -> str:
        """``find_person`` on the words left, and on each run of adjacent words among them in the same
        turn: a word beside a name ("damien chazelle listed") makes the whole find no one."""
        rest = self._reading.rest
        return tool_calls(
            ("find_person", {"name": name[:200]}) for name in [rest, *name_candidates(rest)]
        )

    def _rank_person(self, obs: str) -> str:
        """A superlative over one person's films ("nolan's longest", "wes anderson's newest and best
        rated"): the person, then their films sorted by the first superlative the question says."""
        people, whole = self._people_in(obs)
        r = self._reading
        person = named_person(people, r.rest, "directed", whole=whole)
        if person is None:
            self._stage = "open_hits"
            return tool_call("search", query=r.query, k=SEARCH_K)
        totals = person.get("totals") or {}
        key, order = r.sort or ("rating", "desc")
        args: dict[str, Any] = {"sort_by": key, "order": order, "limit": 3, **self._years()}
        if totals.get("directed", 0) or not totals.get("acted", 0):
            args["director"] = str(person["name"])
        else:
            args["cast"] = [str(person["name"])]
        if r.genre:
            args["genre"] = r.genre
        if r.runtime_under:
            args["runtime_max"] = r.runtime_under - 1
        self._stage = "read_top"
        return tool_call("filter_titles", **args)

    @staticmethod
    def _people_in(obs: str) -> tuple[list[Mapping[str, Any]], bool]:
        """The people the turn's first ``find_person`` (all the words left) found; when it found no
        one, everyone the runs of adjacent words found, and True: then only a person whose whole
        name is in the question counts."""
        outputs = tool_outputs(obs)

        def people(out: Any) -> list[Mapping[str, Any]]:
            found = out.get("people") if isinstance(out, Mapping) else None
            return [p for p in found or () if isinstance(p, Mapping) and "name" in p]

        first = people(outputs[0]) if outputs else []
        if first:
            return first, False
        found = [p for out in outputs[1:] for p in people(out)]
        return list({str(p["name"]): p for p in found}.values()), True

    def _read_top(self, obs: str) -> str:
        results = (
            (tool_outputs(obs)[0] or {}).get("results")
            if isinstance(tool_outputs(obs)[0], Mapping)
            else None
        )
        return answer(dated(results[0]) if results else NOTHING)

    def _count_person(self, obs: str) -> str:
        people, whole = self._people_in(obs)
        r = self._reading
        role = r.role or ("acted" if r.genre else "directed")
        person = named_person(people, r.rest, role, whole=whole) if whole else None
        if person is None and not whole and people:
            person = max(
                people, key=lambda p: ((p.get("totals") or {}).get(role, 0), -people.index(p))
            )
        if person is None:
            self._stage = "open_hits"
            return tool_call("search", query=r.query, k=SEARCH_K)
        name = str(person["name"])
        if not r.genre and not r.years_between and not r.years:
            return answer(str((person.get("totals") or {}).get(role, 0)))
        args: dict[str, Any] = {"limit": 1}
        if role == "directed":
            args["director"] = name
        elif role == "acted":
            args["cast"] = [name]
        else:  # no writer filter: the person's own total is the best a keyword agent has
            return answer(str((person.get("totals") or {}).get(role, 0)))
        if r.genre:
            args["genre"] = r.genre
        args.update(self._years())
        self._stage = "read_count"
        return tool_call("filter_titles", **args)

    def _read_count(self, obs: str) -> str:
        out = tool_outputs(obs)[0]
        return answer(str(out["count"]) if isinstance(out, Mapping) and "count" in out else NOTHING)

    # -------------------------------------------------------------- helpers

    def _years(self) -> dict[str, int]:
        r = self._reading
        if r.years_between:
            return {"year_min": r.years_between[0], "year_max": r.years_between[1]}
        if r.years:
            return {"year_min": min(r.years), "year_max": max(r.years)}
        return {}

    def _group_filter(self) -> dict[str, Any]:
        r = self._reading
        key, order = r.sort or ("rating", "desc")
        args: dict[str, Any] = {
            "genre": r.genre,
            "feature_only": True,
            "sort_by": key,
            "order": order,
            **self._years(),
        }
        if r.runtime_under:
            args["runtime_max"] = r.runtime_under - 1
        return args

    @staticmethod
    def _hits(output: Any) -> list[Mapping[str, Any]]:
        results = output.get("results") if isinstance(output, Mapping) else None
        return [h for h in results or () if isinstance(h, Mapping) and "id" in h]

    # -------------------------------------------------------------- single turn

    def _answer_from_passages(self) -> str:
        passages, _ = passages_and_question(self._prompt)
        records = [self._read(p) for p in passages]
        if not any(records):
            return answer(passages[0].partition(" (")[0] if passages else NOTHING)
        reading = self._reading
        if reading.asks == "compare" and reading.options:
            picked = [best_record(read_question(o), records) for o in reading.options]
            key, order = reading.sort or ("rating", "desc")
            valued = [(p[key], p) for p in picked if p and isinstance(p.get(key), (int, float))]
            if len(valued) == 2 and valued[0][1] is not valued[1][1]:
                chosen = (max if order == "desc" else min)(valued, key=lambda v: v[0])
                return answer(dated(chosen[1]))
        record = best_record(reading, records)
        return answer(field_answer(record, reading) if record else NOTHING)

    def _read(self, passage: str) -> dict[str, Any] | None:
        """The catalog record a passage describes (the passage text is the title's indexed document)."""
        from agentenv.corpora.media.catalog import load_catalog

        catalog = load_catalog()
        if self._doc_ids is None:
            ids, texts = catalog.documents()
            self._doc_ids = dict(zip(texts, ids, strict=True))
        title_id = self._doc_ids.get(passage)
        title = catalog.get(title_id) if title_id is not None else None
        return title.to_dict() if title is not None else None
