"""A job's frozen, typed settings: `tomacs.runspec.spec`."""
