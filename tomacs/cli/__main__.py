"""`python -m tomacs.cli`: the same command as the `tomacs` console script."""

from tomacs.cli import main

main()
