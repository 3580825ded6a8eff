"""The `sim` backbone: a calibrated behavioural simulator of LLM agents in one package.

`model` holds the behavioural model and its profiles, `text` writes the reply texts, `backbone` serves
them through the backbone interface, `episodes` vectorises whole debates for the fit, `calibrate` fits
the profiles to the paper's tables and `diagnose` takes the multi-round debates apart. Nothing heavy is
imported here, so `import tomacs.sim.model` stays light.
"""
