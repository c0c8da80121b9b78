"""MediaSearch's generated questions: the record, generators by kind, templates and styles, the on-disk cache, and reading a question as an agent would."""
