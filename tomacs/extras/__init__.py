"""Methods' extras: what plugs a method into the floors above `methods/` (its trainer, its data made
through the executor, its report section, its CLI command), one folder per method. They sit on the top
floor: each imports what it plugs into, and only the "module:attr" strings its method names reach them
(`Method.trainer`, `commands`, `report_sections`), so a method never imports its own extras."""
