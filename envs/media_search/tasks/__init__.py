"""Which tasks a MediaSearch env serves: the generated splits as Tasks, the casual split, the user's own questions (answer types from the catalog), and the reachability check."""
