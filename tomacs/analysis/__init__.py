"""Analyses that reuse the shared executor on a composed config (e.g. counterfactual propagation)."""
