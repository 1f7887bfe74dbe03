"""queueing."""
