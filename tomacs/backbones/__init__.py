"""Backbones: the simulator and real LLMs behind one interface."""
