"""The funds tables' builder, their Parquet files and DATA.md (provenance)."""
