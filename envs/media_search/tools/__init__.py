"""The MediaSearch tools, their JSON and compact outputs, the catalog index they query, and the corpus the retrieval server indexes."""
