"""Text embedders for the agents' analyses and their persistent cache."""
