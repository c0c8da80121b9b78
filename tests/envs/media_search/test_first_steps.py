"""No MediaSearch step loads the catalog's people: a first ``find_person`` call or graded person answer
loaded them inside the step (about 150 ms of CPU, 0.4-0.6 s on a loaded machine); ``make`` does now,
through :meth:`AnswerCatalog.load`, which every MediaSearch env calls when it is made."""

from __future__ import annotations

from agentenv.corpora.media.catalog import Catalog, load_catalog
from agentenv.envs.media_search.grading.answer_catalog import AnswerCatalog


def test_the_answer_catalog_loads_the_people_at_make() -> None:
    shared = load_catalog()
    loads: list[int] = []

    def people() -> dict:
        loads.append(1)
        return dict(shared.people)

    catalog = Catalog(
        shared.titles, shared.checksum, people
    )  # as in a new process: people not loaded yet
    answers = AnswerCatalog(catalog).load()
    assert loads == [1], "load() (called by make) must load the people"
    ref = answers.people.lookup("Christopher Nolan").ref
    assert catalog.people[ref].name == "Christopher Nolan" and loads == [1]
