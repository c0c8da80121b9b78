"""Where agentenv keeps what it builds: paths, checksummed caches, checksums, verified stamps, fork sharing and the progress line of a slow first build."""
