"""The parts of one job: its components, run directory, files, checkpoints and progress lines."""
