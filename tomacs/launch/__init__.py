"""Starting jobs and sweeps: the Hydra entry, a job's life, plans, tracking, table sweeps."""
