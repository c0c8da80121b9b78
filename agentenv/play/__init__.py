"""Play an env by hand in the terminal: the session, reading what a person types, what it prints."""
