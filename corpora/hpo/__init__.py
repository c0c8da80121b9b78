"""The HPO knowledge base behind rare disease: hp.obo, phenotype.hpoa, OMIM titles, the cache."""
