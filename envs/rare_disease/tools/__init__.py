"""The rare-disease tools: disease search and profiles, HPO lookup, the reference phenotype ranker and their on-disk indexes."""
