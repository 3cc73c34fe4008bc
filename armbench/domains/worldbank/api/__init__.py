"""A replica of the World Bank Indicators API v2 (api.worldbank.org/v2) over the `wb_*` tables.

`app.create_app()` is the FastAPI app factory; DATA.md (World Bank section) lists where the replica
matches the real API and where it differs.
"""
