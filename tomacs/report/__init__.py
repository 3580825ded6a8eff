"""`tomacs report`: paper-shaped tables, the papers' numbers beside ours, plots; read from results.json."""
