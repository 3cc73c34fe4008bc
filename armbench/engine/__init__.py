"""The run engine: plan, worker pool, agent loop, limits, records, manifest and store."""
