"""The GPU spec replica site: a TechPowerUp-like database rendered from `gpus.parquet`.

The browsing arm reads it through a browser: a filterable list (100 rows a page, no transistor
count, die size or TDP) and one page per GPU with every field.
"""
