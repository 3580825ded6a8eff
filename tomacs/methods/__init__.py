"""Topology methods: they decide graphs and never call an LLM."""
