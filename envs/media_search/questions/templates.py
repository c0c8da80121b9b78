"""Phrasings of the generated MediaSearch questions (several per question type).

Kept apart from the generators so that wording can be reviewed (and extended)
without reading sampling code. Each list holds ``str.format`` templates; a
generator picks one with its own seeded RNG. Placeholders: ``{film}``,
``{a}``/``{b}`` (films or people), ``{person}``, ``{desc}`` (a noun phrase such as
"1995 comedy feature film"), ``{descs}`` (its plural), ``{y0}``/``{y1}``,
``{genre}``.

Example:
    >>> genre_adjective("Sci-Fi"), genre_adjective("Comedy")
    ('science-fiction', 'comedy')
"""

from __future__ import annotations

LOOKUP = {
    "director": [
        "Who directed {film}?",
        "Which filmmaker directed {film}?",
        "Name the director of {film}.",
        "{film} was directed by whom?",
    ],
    "writer": [
        "Who is credited as the writer of {film}?",
        "Who wrote {film}?",
        "Name the screenwriter credited on {film}.",
    ],
    "year": [
        "In what year was {film} released?",
        "What year did {film} come out?",
        "{film} was released in which year?",
    ],
    "runtime": [
        "How long is {film}, in minutes?",
        "What is the runtime of {film} in minutes?",
        "How many minutes does {film} run?",
    ],
    "cast": [
        "Which of these two actors appears in the cast of {film}: {a} or {b}?",
        "{film}: who is in its cast, {a} or {b}?",
        "Does {film} feature {a} or {b}? Name the one in its cast.",
    ],
}

CONSTRAINT = [
    "What is the {desc} {clauses}?",
    "Name the {desc} {clauses}.",
    "Which {desc} {clauses} is in the catalog?",
    "Find the title of the {desc} {clauses}.",
]

SUPERLATIVE = {
    ("rating", "desc"): [
        "Which {desc} has the highest critics' rating?",
        "What is the highest-rated {desc}, by critics' rating?",
        "Among {descs}, which one has the best critics' rating?",
    ],
    ("rating", "asc"): [
        "Which {desc} has the lowest critics' rating?",
        "What is the lowest-rated {desc}, by critics' rating?",
        "Among {descs}, which one has the worst critics' rating?",
    ],
    ("runtime", "desc"): [
        "What is the longest {desc}?",
        "Which {desc} has the longest runtime?",
        "Among {descs}, which one runs the longest?",
    ],
    ("runtime", "asc"): [
        "What is the shortest {desc}?",
        "Which {desc} has the shortest runtime?",
        "Among {descs}, which one runs the shortest?",
    ],
}

TWO_HOP = {
    "director": [
        "Who directed the film in which {a} and {b} both appear?",
        "{a} and {b} appear together in exactly one film in the catalog. Who directed it?",
        "Name the director of the only film that stars both {a} and {b}.",
    ],
    "writer": [
        "Who wrote the film in which {a} and {b} both appear?",
        "{a} and {b} share exactly one film in the catalog. Who is credited as its writer?",
        "Name the writer of the only film that features both {a} and {b}.",
    ],
    "year": [
        "In what year was the only film featuring both {a} and {b} released?",
        "{a} and {b} share exactly one film in the catalog. What year did it come out?",
        "Which year saw the release of the one film starring both {a} and {b}?",
    ],
}

COMPARISON = {
    "year": [
        "Which was released first: {a} or {b}?",
        "Which film is older, {a} or {b}?",
        "Of {a} and {b}, which came out earlier?",
    ],
    "runtime": [
        "Which film is longer: {a} or {b}?",
        "Which has the longer runtime, {a} or {b}?",
        "Between {a} and {b}, which runs longer?",
    ],
    "rating": [
        "Which film has the higher critics' rating: {a} or {b}?",
        "Did critics rate {a} or {b} higher?",
        "Between {a} and {b}, which is rated higher by critics?",
    ],
}

COUNT = {
    "directed": [
        "How many films in the catalog did {person} direct between {y0} and {y1} (inclusive)?",
        "From {y0} through {y1}, how many films directed by {person} does the catalog list?",
        "Count the catalog's films directed by {person} and released from {y0} to {y1}.",
    ],
    "acted": [
        "In how many {genre} films in the catalog does {person} appear?",
        "How many {genre} films in the catalog have {person} in the cast?",
        "Count the catalog's {genre} films featuring {person}.",
    ],
    "wrote": [
        "How many films in the catalog credit {person} as a writer?",
        "For how many films in the catalog is {person} credited as writer?",
        "How many films did {person} write, according to the catalog?",
    ],
}

_ADJECTIVES = {
    "Sci-Fi": "science-fiction",
    "Animation": "animated",
    "Biography": "biographical",
    "History": "historical",
    "Sport": "sports",
}


def genre_adjective(genre: str) -> str:
    """Return how a genre reads before "film" in a question."""
    return _ADJECTIVES.get(genre, genre.lower())
