"""MediaSearch menus: tool-call templates filled from the question and earlier results, and answers.

The family's ``structured`` part (:data:`MENUS`), which ``agentenv.lessons.structured`` reaches through the registry.

``media-tools`` (``MediaSearch-v0``) lets a policy search with the question,
open the first or second hit, look up the person the question names, and
answer a hit's title or a field of the opened film. ``media-passages``
(``MediaSearch-SingleTurn-v0``) answers a passage's title or a field of the
top passage. Which field to answer is the policy's to learn from the
question cues in the features.

The question is read by :func:`agentenv.envs.media_search.questions.reading.read_question`, the
reader the ``bm25`` baseline and ``check-tasks`` use: the search template
sends its rewritten query (no question words: "who wrote X" no longer
retrieves films titled *Wrote*), the person template its first named span or
the words left of a count question ("spielberg" finds Steven Spielberg), and
the cue features add the field it reads from the question's meaning to the
wording cues, so a casual "when was boyhood released (year)?" cues a year.
"""

from __future__ import annotations

from typing import Any

from agentenv.engine.actions import answer, tool_call, tool_calls
from agentenv.envs.media_search.agents.bm25_strategy import (
    COMPARE_VERIFY,
    VERIFY,
    best_record,
    dated,
    shortlist,
    tool_outputs,
)
from agentenv.envs.media_search.agents.film_match import match_score
from agentenv.envs.media_search.questions.reading import QuestionReading, read_question
from agentenv.envs.media_search.structured.reading import (
    CUES,
    media_passages,
    media_question,
    named_in,
    parse_passage,
    person_in_question,
    question_cues,
)
from agentenv.lessons.structured.menu import COMMON_FEATURES, Choice, Menu
from agentenv.lessons.structured.reading import squash

SEARCH_K = 20
"""Hits asked of the menu's ``search`` (the tool's maximum, as bm25 asks: the film meant is often not the top hit)."""
ANSWER_HITS = 5
""""Answer with candidate i" entries, i = 1..5."""
FIELDS = ("year", "director", "writer", "runtime", "cast member")
ASKS = ("title", "director", "writer", "year", "runtime", "cast", "compare", "superlative", "count")
"""What :func:`read_question` can find a question asks for (one feature each)."""
N_TOOLS = 7
"""Tool entries at the head of the ``media-tools`` menu."""
NOTHING = "unknown"
"""What an answer entry says when its source is not there yet (graded wrong by the env, as it should be)."""


def field_value(record: dict[str, Any] | None, field: str, question: str) -> str:
    """The ``field`` of a film record as answer text, or :data:`NOTHING`."""
    if not record:
        return NOTHING
    if field == "year":
        return str(record["year"]) if record.get("year") is not None else NOTHING
    if field == "runtime":
        return str(record["runtime"]) if record.get("runtime") is not None else NOTHING
    key = {"director": "directors", "writer": "writers", "cast member": "cast"}[field]
    names = [str(n) for n in record.get(key) or []]
    if not names:
        return NOTHING
    if field == "cast member":
        return named_in(question, names) or names[0]
    return names[0]


_ASKS_CUE = {
    "runtime": "runtime",
    "count": "count",
    "cast": "cast",
    "director": "director",
    "writer": "writer",
    "year": "year",
    "compare": "comparison",
    "superlative": "superlative",
}
"""The cue of :data:`~agentenv.envs.media_search.structured.reading.CUES` that each field :func:`read_question` reads turns on."""


def reading_cues(question: str) -> dict[str, float]:
    """The wording cues, plus the cue of the field the shared reader finds (same names, same order)."""
    cues = question_cues(question)
    cue = _ASKS_CUE.get(read_question(question).asks)
    if cue is not None:
        cues[cue] = 1.0
    return cues


class MediaToolsMenu(Menu):
    """Menu of ``MediaSearch-v0``: the tool chains bm25's rule uses, as entries, and answers from their results.

    Tool entries: search with the question; open the best-fitting hits (bm25's verify step: the
    :data:`VERIFY` hits that fit the question best, opened in one turn, the best fit kept); open hit 1;
    search each option of an "A or B" question and open their best fits; filter the catalog by the
    genre and years the question names, sorted as it asks; find the person the question names, and
    count that person's films under the question's genre and years. Answer entries: a hit's title, the
    opened film or one of its fields, the option the comparison picks, the filter's first title, the
    person's film total or the count.

    Which chain and which answer fit a question is the policy's to learn from the cue features; no
    single sequence fits every kind of question. :meth:`_mask` allows an entry only when its evidence is
    there and its call is new, so masked PPO never wastes a turn on an impossible call.
    """

    name = "media-tools"
    required_tools = frozenset({"search", "get_title", "find_person", "filter_titles"})
    labels = (
        f"search(question, k={SEARCH_K})",
        f"get_title(the {VERIFY} best-fitting hits)",
        "get_title(hit 1)",
        "search(each option) + get_title(their best fits)",
        "filter_titles(genre and years asked, sorted as asked)",
        "find_person(name in question)",
        "filter_titles(count of the person's films, genre and years asked)",
        *(f"answer title of hit {i + 1}" for i in range(ANSWER_HITS)),
        "answer the opened film",
        *(f"answer {f} of opened film" for f in FIELDS),
        "answer the option the comparison picks",
        "answer the filter's first title",
        "answer the person's film total",
        "answer the count",
    )
    feature_names = (
        *COMMON_FEATURES,
        *(f"cue_{c}" for c in CUES),
        *(f"asks_{a}" for a in ASKS),
        "question_has_options",
        "question_has_genre_and_years",
        "question_names_person",
        *(
            f"used_{t}"
            for t in (
                "search",
                "open_best",
                "open_hit_1",
                "options",
                "filter",
                "find_person",
                "count",
            )
        ),
        "hits",
        "top_score",
        "top_gap",
        "opened_film",
        "opened_fit",
        "opened_has_director",
        "opened_has_writer",
        "options_opened",
        "filter_results",
        "person_found",
        "count_read",
        *(
            f"last_was_{t}"
            for t in (
                "search",
                "open_best",
                "open_hit_1",
                "options",
                "filter",
                "find_person",
                "count",
            )
        ),
        "last_returned_nothing",
    )

    def _start(self) -> None:
        self.question = media_question(self.prompt)
        self.reading = read_question(self.question)
        self.cues = reading_cues(self.question)
        self.person = person_in_question(self.question) or (
            self.reading.rest if self.reading.asks == "count" else None
        )
        self.hits: list[dict[str, Any]] = []
        self.best_hits: list[dict[str, Any]] = []
        self.record: dict[str, Any] | None = None
        self.fit = 0.0
        self.picked_option: dict[str, Any] | None = None
        self.options_opened = 0.0
        self.filter_top: dict[str, Any] | None = None
        self.people: list[dict[str, Any]] = []
        self.count: int | None = None
        self.last_tool = -1
        self.last_empty = 0.0

    # ------------------------------------------------------------ actions
    def _render(self, index: int) -> Choice:
        label = self.labels[index]
        r = self.reading
        if index == 0:
            return Choice(tool_call("search", query=r.query, k=SEARCH_K), label, "tool")
        if index == 1:
            ids = [str(h["id"]) for h in self.best_hits] or ["tt0000000"]
            return Choice(tool_calls(("get_title", {"title_id": i}) for i in ids), label, "tool")
        if index == 2:
            return Choice(
                tool_call(
                    "get_title", title_id=str(self.hits[0]["id"]) if self.hits else "tt0000000"
                ),
                label,
                "tool",
            )
        if index == 3:
            options = r.options or (self.question[:200],)
            return Choice(
                tool_calls(("search", {"query": o[:500], "k": SEARCH_K}) for o in options),
                label,
                "tool",
            )
        if index == 4:
            return Choice(tool_call("filter_titles", **group_filter(r), limit=1), label, "tool")
        if index == 5:
            return Choice(
                tool_call("find_person", name=(self.person or self.question)[:200]), label, "tool"
            )
        if index == 6:
            return Choice(
                tool_call("filter_titles", **self._count_filter(), limit=1), label, "tool"
            )
        i = index - N_TOOLS
        if i < ANSWER_HITS:
            text = dated(self.hits[i]) if i < len(self.hits) else NOTHING
            return Choice(answer(text), label, "answer", 1)
        i -= ANSWER_HITS
        if i == 0:
            return Choice(
                answer(dated(self.record) if self.record else NOTHING), label, "answer", 1
            )
        if i <= len(FIELDS):
            return Choice(
                answer(field_value(self.record, FIELDS[i - 1], self.question)), label, "answer", 1
            )
        i -= len(FIELDS) + 1
        text = [
            dated(self.picked_option) if self.picked_option else NOTHING,
            dated(self.filter_top) if self.filter_top else NOTHING,
            str(self._person_total()) if self.people else NOTHING,
            str(self.count) if self.count is not None else NOTHING,
        ][i]
        return Choice(answer(text), label, "answer", 1)

    def _person(self) -> dict[str, Any] | None:
        if not self.people:
            return None
        role = self._role()
        return max(
            self.people, key=lambda p: ((p.get("totals") or {}).get(role, 0), -self.people.index(p))
        )

    def _role(self) -> str:
        return self.reading.role or ("acted" if self.reading.genre else "directed")

    def _person_total(self) -> int:
        person = self._person() or {}
        return int((person.get("totals") or {}).get(self._role(), 0))

    def _count_filter(self) -> dict[str, Any]:
        person = self._person() or {}
        name = str(person.get("name") or self.person or "")
        args: dict[str, Any] = {"cast": [name]} if self._role() == "acted" else {"director": name}
        if self.reading.genre:
            args["genre"] = self.reading.genre
        args.update(years_asked(self.reading))
        return args

    def _mask(self) -> list[bool]:
        r = self.reading
        new = [u == 0 for u in self.used]
        person_role = self._role() in ("acted", "directed")
        tools = [
            new[0],
            new[1] and bool(self.hits),
            new[2] and bool(self.hits),
            new[3] and r.options is not None,
            new[4] and bool(r.genre) and bool(r.years or r.years_between),
            new[5] and bool(self.person),
            new[6]
            and bool(self.people)
            and person_role
            and bool(r.genre or r.years or r.years_between),
        ]
        answers = [i < len(self.hits) for i in range(ANSWER_HITS)]
        answers += [self.record is not None]
        answers += [field_value(self.record, f, self.question) != NOTHING for f in FIELDS]
        answers += [
            self.picked_option is not None,
            self.filter_top is not None,
            bool(self.people),
            self.count is not None,
        ]
        return tools + answers

    # ------------------------------------------------------------ reading the replies
    def _read(self, index: int, obs: str) -> None:
        outputs = tool_outputs(obs)
        self.last_tool = index
        first = outputs[0] if outputs else None
        self.last_empty = 1.0
        if index == 0 and isinstance(first, dict):
            self.hits = [h for h in first.get("results") or [] if isinstance(h, dict) and "id" in h]
            self.best_hits = shortlist(self.reading, self.hits, VERIFY)
            self.last_empty = 0.0 if self.hits else 1.0
        elif index in (1, 2):
            record = best_record(self.reading, outputs)
            if record is not None:
                self.record = dict(record)
                self.fit = match_score(self.reading, record, 0)
                self.last_empty = 0.0
        elif index == 3:
            self._read_options(outputs)
        elif index == 4 and isinstance(first, dict):
            results = first.get("results") or []
            self.filter_top = results[0] if results and isinstance(results[0], dict) else None
            self.last_empty = 0.0 if self.filter_top else 1.0
        elif index == 5 and isinstance(first, dict):
            self.people = [
                p for p in first.get("people") or [] if isinstance(p, dict) and "name" in p
            ]
            for p in self.people:
                p.setdefault(
                    "totals",
                    {role: len(p.get(role) or []) for role in ("directed", "wrote", "acted")},
                )
            self.last_empty = 0.0 if self.people else 1.0
        elif index == 6 and isinstance(first, dict) and "count" in first:
            self.count = int(first["count"])
            self.last_empty = 0.0

    def _read_options(self, outputs: list[Any]) -> None:
        """Each option's best-fitting hit, by what the hits show (title, year); the one the question's sort picks."""
        options = self.reading.options or ()
        picked = []
        for option, out in zip(options, outputs, strict=False):
            hits = (
                [h for h in (out or {}).get("results") or [] if isinstance(h, dict) and "id" in h]
                if isinstance(out, dict)
                else []
            )
            best = best_record(read_question(option), hits[:COMPARE_VERIFY])
            if best is not None:
                picked.append(best)
        self.options_opened = len(picked) / 2.0
        key, order = self.reading.sort or ("rating", "desc")
        valued = [
            (p[key], i, p) for i, p in enumerate(picked) if isinstance(p.get(key), (int, float))
        ]
        if valued:
            chosen = (max if order == "desc" else min)(valued, key=lambda v: (v[0], -v[1]))
            self.picked_option = dict(chosen[2])
            self.last_empty = 0.0

    def _features(self) -> list[float]:
        r = self.reading
        scores = [float(h.get("score") or 0.0) for h in self.hits[:2]]
        top = scores[0] if scores else 0.0
        gap = (scores[0] - scores[1]) / scores[0] if len(scores) > 1 and scores[0] > 0 else 0.0
        record = self.record or {}
        return [
            *self.cues.values(),
            *(1.0 if r.asks == a else 0.0 for a in ASKS),
            1.0 if r.options else 0.0,
            1.0 if r.genre and (r.years or r.years_between) else 0.0,
            1.0 if self.person else 0.0,
            *(min(float(u), 1.0) for u in self.used[:N_TOOLS]),
            len(self.hits) / SEARCH_K,
            squash(top, 20.0),
            gap,
            1.0 if self.record else 0.0,
            squash(max(self.fit, 0.0), 5.0),
            1.0 if record.get("directors") else 0.0,
            1.0 if record.get("writers") else 0.0,
            self.options_opened,
            1.0 if self.filter_top else 0.0,
            1.0 if self.people else 0.0,
            1.0 if self.count is not None else 0.0,
            *(1.0 if self.last_tool == t else 0.0 for t in range(N_TOOLS)),
            self.last_empty,
        ]


def years_asked(reading: QuestionReading) -> dict[str, int]:
    """The ``year_min``/``year_max`` filter arguments of the years a question names."""
    if reading.years_between:
        return {"year_min": reading.years_between[0], "year_max": reading.years_between[1]}
    if reading.years:
        return {"year_min": min(reading.years), "year_max": max(reading.years)}
    return {}


def group_filter(reading: QuestionReading) -> dict[str, Any]:
    """``filter_titles`` arguments for a superlative question: its genre, years and runtime cap, sorted as it asks."""
    key, order = reading.sort or ("rating", "desc")
    args: dict[str, Any] = {
        "feature_only": True,
        "sort_by": key,
        "order": order,
        **years_asked(reading),
    }
    if reading.genre:
        args["genre"] = reading.genre
    if reading.runtime_under:
        args["runtime_max"] = reading.runtime_under - 1
    return args


class MediaPassagesMenu(Menu):
    """Menu of ``MediaSearch-SingleTurn-v0``: the title of passage 1..5, or a field of the top passage."""

    name = "media-passages"
    labels = (
        *(f"answer title of passage {i + 1}" for i in range(ANSWER_HITS)),
        *(f"answer {f} of passage 1" for f in FIELDS),
    )
    feature_names = (
        *COMMON_FEATURES,
        *(f"cue_{c}" for c in CUES),
        "passages",
        *(f"passage_{i + 1}_title_in_question" for i in range(ANSWER_HITS)),
        "top_has_director",
        "top_has_writer",
        "top_has_cast",
    )

    def _start(self) -> None:
        self.question = media_question(self.prompt)
        self.cues = reading_cues(self.question)
        self.records = [parse_passage(p) for p in media_passages(self.prompt)]

    def _render(self, index: int) -> Choice:
        if index < ANSWER_HITS:
            text = str(self.records[index]["title"]) if index < len(self.records) else NOTHING
            return Choice(answer(text), self.labels[index], "answer", 1)
        top = self.records[0] if self.records else None
        field = FIELDS[index - ANSWER_HITS]
        return Choice(
            answer(field_value(top, field, self.question)), self.labels[index], "answer", 1
        )

    def _features(self) -> list[float]:
        in_question = [
            1.0
            if i < len(self.records) and named_in(self.question, [str(self.records[i]["title"])])
            else 0.0
            for i in range(ANSWER_HITS)
        ]
        top = self.records[0] if self.records else {}
        return [
            *self.cues.values(),
            len(self.records) / ANSWER_HITS,
            *in_question,
            1.0 if top.get("directors") else 0.0,
            1.0 if top.get("writers") else 0.0,
            1.0 if top.get("cast") else 0.0,
        ]


MENUS = (MediaToolsMenu, MediaPassagesMenu)
"""The family's structured menus, the ``Family.structured`` part: the tools menu, then the single-turn one."""
