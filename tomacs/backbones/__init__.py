"""Backbones: the interface every backbone serves, and real LLMs (the simulator is `tomacs.sim.backbone`)."""
