"""How one batch of questions runs: the executor, the decision rules, the batch walk."""
