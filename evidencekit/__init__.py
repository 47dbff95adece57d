"""evidencekit: contract-first toolkit and the research-evidence service built with it."""
