"""MediaConcierge-v0: the user's film request, its claims, the scripted user and assistants."""
