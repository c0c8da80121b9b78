"""MediaSearch's structured menus and the readers of its public text."""
