"""cycle."""
