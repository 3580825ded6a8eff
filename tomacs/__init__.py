"""tomacs: train and compare communication topologies for multi-round LLM multi-agent systems."""

__version__ = "0.1.0"
