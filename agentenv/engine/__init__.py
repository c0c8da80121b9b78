"""The turn engine shared by ToolEnv and the dialogue base: turns, parsing, tools and their deadline, actions, spaces, env options, the answer grammar and spellings."""
