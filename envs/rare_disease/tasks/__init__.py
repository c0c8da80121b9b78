"""Which patients a rare-disease env serves as Tasks: a split's simulated patients, the real published cases (data/), phenopackets and the user's own, and the solvability check."""
