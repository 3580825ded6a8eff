"""G-Safeguard's extras: labelled conversations (`data`), the supervised trainer (`trainer`), the
report's App. E.4 section (`report`) and `tomacs gsafeguard-data` (`cli`); the method is
`tomacs.methods.gsafeguard`."""
