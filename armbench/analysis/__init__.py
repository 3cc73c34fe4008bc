"""Reading run sets: statistics, the per-group summary, reports, comparisons, the regression gate, plots, pages."""
