"""The film catalog behind MediaSearch: the pinned source database, its cleaning and cache."""
