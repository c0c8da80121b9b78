"""The ``agentenv`` command: the entry point (main), argument helpers, one module per sub-command. Nothing in the library imports this package."""
