"""The gpus tables' builder, their Parquet files and DATA.md (provenance)."""
