"""The four MediaSearch tools: search, filter_titles, get_title, find_person.

Why these four: they cover the moves a person makes with a film database —
find a film by words, narrow by facts, read a record, look up a person — so
every generated question has a gold plan made of them, and an agent must
chain them (search → get_title, filter → get_title, find_person → filter).

The tool bodies are plain methods of :class:`MediaTools` over a
:class:`~agentenv.corpora.media.catalog.Catalog` and a
:class:`~agentenv.retrieval.base.Retriever`; :func:`make_media_tools` wraps
them as :class:`agentenv.engine.tools.Tool` objects. Outputs are small JSON objects
(``search`` and ``get_title`` return their JSON text, the others dicts);
expected failures raise :class:`~agentenv.engine.tools.ToolError` with a hint. With
``compact=True`` the tools return short plain-text lines instead
(:mod:`agentenv.envs.media_search.tools.compact`), for small models with short
contexts; the errors are the same. No
output or error mentions questions, answers or task ids: tools see only the
catalog.

Example:
    >>> FilterArgs(genre="Comedy", year_min=1995, year_max=1995, sort_by="runtime").limit
    10
    >>> SearchArgs.model_json_schema()["properties"]["k"]["maximum"]
    20
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentenv.corpora.media.catalog import FEATURE_MIN_RUNTIME, Catalog, Title, normalize_key
from agentenv.engine.tools import Tool, ToolError
from agentenv.envs.media_search.tools import compact as compact_text
from agentenv.envs.media_search.tools.index import CatalogIndex, FilterQuery, QueryError
from agentenv.envs.media_search.tools.person_index import person_index
from agentenv.envs.media_search.tools.tool_json import score_text, search_prefixes, title_text
from agentenv.retrieval.base import Retriever
from agentenv.retrieval.env_argument import retriever_argument
from agentenv.retrieval.tokenize import terms_bound

FILMS_PER_ROLE = 30
"""At most this many films per role for an exactly matched person."""
PARTIAL_PEOPLE = 8
"""At most this many partially matched people."""
FILMS_PER_ROLE_PARTIAL = 5
"""At most this many films per role for each partially matched person."""


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SearchArgs(_Args):
    """Find films by keywords."""

    query: str = Field(
        min_length=1,
        max_length=500,
        description="Free-text query: words from a title, names of people, genres, years.",
    )
    k: int = Field(default=5, ge=1, le=20, description="Number of results to return (1-20).")


class FilterArgs(_Args):
    """Constraints on films; all optional, combined with AND."""

    genre: str | None = Field(
        default=None,
        description="One genre, e.g. 'Comedy', 'Sci-Fi', 'Documentary' (case-insensitive).",
    )
    year_min: int | None = Field(
        default=None, ge=1900, le=2100, description="Earliest release year (inclusive)."
    )
    year_max: int | None = Field(
        default=None, ge=1900, le=2100, description="Latest release year (inclusive)."
    )
    director: str | None = Field(
        default=None,
        max_length=200,
        description="Full name of a director as credited, e.g. 'Christopher Nolan' (case and accents ignored; "
        "a surname alone does not match).",
    )
    cast: list[str] = Field(
        default_factory=list,
        max_length=5,
        description="Full names of actors who must ALL appear in the cast (case and accents ignored).",
    )
    runtime_min: int | None = Field(
        default=None, ge=0, le=1000, description="Minimum runtime in minutes (inclusive)."
    )
    runtime_max: int | None = Field(
        default=None, ge=0, le=1000, description="Maximum runtime in minutes (inclusive)."
    )
    min_rating: float | None = Field(
        default=None,
        ge=0,
        le=10,
        description="Minimum critics' rating (Rotten Tomatoes average, 0-10).",
    )
    feature_only: bool = Field(
        default=False,
        description=f"Keep only feature films (runtime of at least {FEATURE_MIN_RUNTIME} minutes).",
    )
    sort_by: Literal["rating", "year", "runtime", "title"] = Field(
        default="rating", description="Sort key; titles with an unknown value come last."
    )
    order: Literal["desc", "asc"] = Field(default="desc", description="Sort direction.")
    limit: int = Field(default=10, ge=1, le=25, description="Number of results to return (1-25).")


class GetTitleArgs(_Args):
    """Which film to show in full."""

    title_id: str = Field(
        min_length=1,
        max_length=40,
        description="A title id as returned by search or filter_titles, e.g. 'tt1375666'.",
    )


class FindPersonArgs(_Args):
    """Which person to look up."""

    name: str = Field(
        min_length=1,
        max_length=200,
        description="A person's name, e.g. 'Christopher Nolan'; a part of a name lists close matches.",
    )


def _brief(t: Title) -> dict[str, Any]:
    return {"id": t.id, "title": t.title, "year": t.year}


def _unknown_title(title_id: str) -> ToolError:
    return ToolError(
        f"no title with id {title_id[:40]!r}; ids look like 'tt1375666' or 'm12345' "
        "and come from search or filter_titles"
    )


class MediaTools:
    """The tool bodies, bound to one catalog and one retriever.

    Build once per process and share: the index (numpy columns, sort orders)
    is read-only after construction.

    The agent-facing tools are :meth:`search_text` and :meth:`get_title_text`: they
    return the JSON text itself, built from per-title fragments encoded once (every
    title's search row at the first search, a record at its first look-up), so a step
    spends its time ranking rather than re-encoding records. :meth:`search` and
    :meth:`get_title` return the same content as dicts, for Python callers.
    """

    def __init__(
        self, catalog: Catalog, retriever: Retriever, index: CatalogIndex | None = None
    ) -> None:
        self.catalog = catalog
        self.retriever = retriever
        self.index = index or shared_catalog_index(catalog)
        self._shared = shared_fragments(catalog)

    def search(self, args: SearchArgs) -> dict[str, Any]:
        """Rank titles by BM25 over their descriptions (title, year, genres, credits)."""
        if not args.query.strip():
            raise ToolError("the query is empty; give words from a title or names of people")
        results = []
        for hit in self.retriever.search(args.query, args.k):
            t = self.catalog.get(hit.doc_id)
            if t is None:
                raise ToolError("the search index does not match the catalog; rebuild the index")
            results.append(
                {
                    "id": t.id,
                    "title": t.title,
                    "year": t.year,
                    "directors": list(t.directors),
                    "score": round(float(hit.score), 3),
                }
            )
        if not results:
            raise ToolError(f"no title matches {args.query[:80]!r}; try other words")
        return {"results": results}

    def search_text(self, args: SearchArgs) -> str:
        """:meth:`search` as the JSON text the agent reads, from per-title fragments built once.

        The same bytes as ``json.dumps(self.search(args), ensure_ascii=False)``: each result
        is its title's cached prefix (id, title, year, directors) plus the rounded score,
        written as json writes a float. Every call asks the retriever: a served index
        that goes down must show as unavailable, even for a query it answered before.
        """
        if not args.query.strip():
            raise ToolError("the query is empty; give words from a title or names of people")
        hits = self.retriever.search(args.query, args.k)
        if not hits:
            raise ToolError(f"no title matches {args.query[:80]!r}; try other words")
        prefixes = self._shared.prefixes
        parts = []
        for hit in hits:
            prefix = prefixes.get(hit.doc_id)
            if prefix is None:
                raise ToolError("the search index does not match the catalog; rebuild the index")
            parts.append(f"{prefix}{score_text(float(hit.score))}}}")
        return '{"results": [' + ", ".join(parts) + "]}"

    def search_compact(self, args: SearchArgs) -> str:
        """:meth:`search` as compact lines (:func:`~agentenv.envs.media_search.tools.compact.search_lines`)."""
        return compact_text.search_lines(self.search(args)["results"])

    def filter_compact(self, args: FilterArgs) -> str:
        """:meth:`filter_titles` as compact lines (:func:`~agentenv.envs.media_search.tools.compact.filter_lines`)."""
        return compact_text.filter_lines(self.filter_titles(args))

    def get_title_compact(self, args: GetTitleArgs) -> str:
        """:meth:`get_title` as ``key: value`` lines (:func:`~agentenv.envs.media_search.tools.compact.title_lines`)."""
        return compact_text.title_lines(self.get_title(args))

    def find_person_compact(self, args: FindPersonArgs) -> str:
        """:meth:`find_person` as compact lines (:func:`~agentenv.envs.media_search.tools.compact.person_lines`)."""
        return compact_text.person_lines(self.find_person(args))

    def filter_titles(self, args: FilterArgs) -> dict[str, Any]:
        """Return the number of titles meeting every constraint and the first ``limit`` in order."""
        query = FilterQuery(
            genre=args.genre,
            year_min=args.year_min,
            year_max=args.year_max,
            director=args.director,
            cast=tuple(args.cast),
            runtime_min=args.runtime_min,
            runtime_max=args.runtime_max,
            min_rating=args.min_rating,
            feature_only=args.feature_only,
            sort_by=args.sort_by,
            order=args.order,
        )
        try:
            count, positions = self.index.select(query, args.limit)
        except QueryError as exc:
            raise ToolError(str(exc)) from None
        titles = self.catalog.titles
        return {
            "count": count,
            "results": [
                {
                    "id": t.id,
                    "title": t.title,
                    "year": t.year,
                    "runtime": t.runtime,
                    "rating": t.rating,
                }
                for t in (titles[i] for i in positions)
            ],
        }

    def get_title(self, args: GetTitleArgs) -> dict[str, Any]:
        """Return every public field of one title."""
        t = self.catalog.get(args.title_id.strip())
        if t is None:
            raise _unknown_title(args.title_id)
        record = t.to_dict()
        record["is_feature"] = t.is_feature
        return record

    def get_title_text(self, args: GetTitleArgs) -> str:
        """:meth:`get_title` as the JSON text the agent reads, encoded once per title."""
        key = args.title_id.strip()
        text = self._shared.records.get(key)
        if text is None:
            t = self.catalog.get(key)
            if t is None:
                raise _unknown_title(args.title_id)
            text = self._shared.records[key] = title_text(t)
        return text

    def find_person(self, args: FindPersonArgs) -> dict[str, Any]:
        """Return the person credited under this name, else people whose name contains all its words."""
        key = normalize_key(args.name)
        if not key:
            raise ToolError("the name is empty; give a person's name, e.g. 'Christopher Nolan'")
        exact = self.catalog.people.get(key)
        if exact is not None:
            return {"match": "exact", "people": [self._person(exact.name, exact, FILMS_PER_ROLE)]}
        total, keys = person_index(self.catalog).matching(key, PARTIAL_PEOPLE)
        if not total:
            raise ToolError(
                f"nobody in the catalog is credited as {args.name[:80]!r}; check the spelling"
            )
        people = self.catalog.people
        out = [self._person(people[k].name, people[k], FILMS_PER_ROLE_PARTIAL) for k in keys]
        return {"match": "partial", "total_people": total, "people": out}

    # ------------------------------------------------------------------ helpers

    def _person(self, name: str, person: Any, cap: int) -> dict[str, Any]:
        titles = self.catalog.titles
        by_date = person_index(self.catalog).title_rank.__getitem__  # (year, id) order
        entry: dict[str, Any] = {"name": name}
        totals = {}
        for role in ("directed", "wrote", "acted"):
            positions = sorted(getattr(person, role), key=by_date)
            entry[role] = [_brief(titles[i]) for i in positions[:cap]]
            totals[role] = len(positions)
        entry["totals"] = totals
        return entry


def _one_record(args: GetTitleArgs) -> int:
    return 1


SEARCH_WORK_PER_TERM = 12
"""Work units of each query word of a ``search``, repeats included: BM25 adds every query token's
scores in turn (bit for bit as rank_bm25 does), and a frequent one adds a whole row of 17k
document scores, so "de la de la ..." to 500 characters cost 19 ms a call. At 12 units a word an
action searches at most ~80 words in all; a question-length query (20-40 words) fits twice."""


def search_work(args: SearchArgs) -> int:
    """Work units of a ``search`` call (:attr:`agentenv.engine.tools.Tool.work`): the results it renders,
    and :data:`SEARCH_WORK_PER_TERM` per word of the query (as many as any retriever splits it into,
    at most)."""
    return args.k + SEARCH_WORK_PER_TERM * terms_bound(args.query)


def filter_work(args: FilterArgs) -> int:
    """Work units of a ``filter_titles`` call: the results it renders, and a name look-up per actor."""
    return args.limit + len(args.cast) + (args.director is not None)


def find_person_work(args: FindPersonArgs, catalog: Catalog) -> int:
    """Work units of a ``find_person`` call: the most film entries it may render.

    An exact name renders one person, up to :data:`FILMS_PER_ROLE` films a role;
    anything else up to :data:`PARTIAL_PEOPLE` people of :data:`FILMS_PER_ROLE_PARTIAL`.
    So a budget of 1,000 units runs 11 exact look-ups or 8 partial ones in one action.
    """
    if normalize_key(args.name) in catalog.people:
        return 3 * FILMS_PER_ROLE
    return 3 * PARTIAL_PEOPLE * FILMS_PER_ROLE_PARTIAL


#: Modelled production latency of each tool (a search service, a catalog database), in ms.
#: Declared, not measured, so the ``latency_ms`` reward component is deterministic.
MODELLED_LATENCY_MS = {
    "search": 80.0,
    "filter_titles": 40.0,
    "get_title": 10.0,
    "find_person": 25.0,
}


class SharedFragments:
    """What every env of a process derives from one read-only catalog, built once and shared.

    JSON text per title id (:mod:`~agentenv.envs.media_search.tools.tool_json`): every title's search
    result up to its score, read from its cache when the first tools of a process are made (an
    async vector env makes one env in the parent before it forks, so its workers share these
    pages); a whole ``get_title`` record, built on first use (records are long; most are never
    asked for). (The person-name token index of ``find_person`` is
    :func:`~agentenv.envs.media_search.tools.person_index.person_index`.) Per env, these held 2.7 MB
    each (issue: sixteen envs of a vector env held 555 MB).
    """

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.prefixes: dict[str, str] = search_prefixes(catalog)
        """Search-result JSON up to the score, by title id."""
        self.records: dict[str, str] = {}


@lru_cache(maxsize=4)
def shared_fragments(catalog: Catalog) -> SharedFragments:
    """The :class:`SharedFragments` of a catalog, one per process."""
    return SharedFragments(catalog)


@lru_cache(maxsize=4)
def shared_catalog_index(catalog: Catalog) -> CatalogIndex:
    """The filter index of a catalog, one per process (read-only; its lazily built masks are shared too)."""
    return CatalogIndex(catalog)


def make_media_tools(
    catalog: Catalog,
    retriever: Retriever,
    index: CatalogIndex | None = None,
    *,
    compact: bool = False,
) -> list[Tool]:
    """Return the four MediaSearch tools over ``catalog``, searching with ``retriever``.

    ``retriever`` must index the ids and texts of ``catalog.documents()``.
    ``compact=True``: the tools answer in plain-text lines instead of JSON
    (:mod:`agentenv.envs.media_search.tools.compact`); same arguments and errors.
    """
    tools = MediaTools(catalog, retriever, index)
    genres = ", ".join(tools.index.genre_names())
    if compact:
        search, filter_titles, get_title, find_person = (
            tools.search_compact,
            tools.filter_compact,
            tools.get_title_compact,
            tools.find_person_compact,
        )
    else:
        search, filter_titles, get_title, find_person = (
            tools.search_text,
            tools.filter_titles,
            tools.get_title_text,
            tools.find_person,
        )
    scores = "" if compact else " and scores"
    return [
        Tool(
            "search",
            "Search film descriptions (title, year, genres, director, writers, cast) by keywords; "
            f"returns ids, titles, years, directors{scores}, best first.",
            SearchArgs,
            search,
            latency_ms=MODELLED_LATENCY_MS["search"],
            work=search_work,
        ),
        Tool(
            "filter_titles",
            "List films meeting structured constraints (all combined with AND), sorted; "
            "returns the total count and the first results with id, title, year, runtime and critics' "
            f"rating. Genres: {genres}.",
            FilterArgs,
            filter_titles,
            latency_ms=MODELLED_LATENCY_MS["filter_titles"],
            work=filter_work,
        ),
        Tool(
            "get_title",
            "Get the full record of a film by id: title, year, release date, runtime, genres, "
            "directors, writers, cast (alphabetical, not billing order), languages, countries, critics' "
            "rating, Tomatometer, box office, Oscars won, awards.",
            GetTitleArgs,
            get_title,
            latency_ms=MODELLED_LATENCY_MS["get_title"],
            work=_one_record,
        ),
        Tool(
            "find_person",
            "Look up a person by name and list the films they directed, wrote and acted in "
            "(oldest first), with totals per role.",
            FindPersonArgs,
            find_person,
            latency_ms=MODELLED_LATENCY_MS["find_person"],
            work=partial(find_person_work, catalog=catalog),
        ),
    ]


def catalog_retriever(catalog: Catalog, retriever: str | Retriever) -> Retriever:
    """The ``search`` index over ``catalog``'s documents, from an env's ``retriever=`` argument
    (:func:`~agentenv.retrieval.env_argument.retriever_argument`); cached on disk by the catalog checksum."""

    def build(spec: str) -> Retriever:
        from agentenv.envs.media_search.tools.corpus import media_retriever_params
        from agentenv.retrieval import build_retriever

        ids, texts = catalog.documents()
        return build_retriever(
            spec, texts, ids, corpus_checksum=catalog.checksum, **media_retriever_params(spec)
        )

    if isinstance(retriever, str):  # every later env of the process skips the corpus's cache key
        from agentenv.retrieval.cache import loaded_for

        spec = retriever
        return loaded_for(
            ("media", catalog.checksum, spec), lambda: retriever_argument(spec, build=build)
        )
    return retriever_argument(retriever, build=build)
