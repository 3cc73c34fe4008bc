"""What the replica websites share: list pages (query, sorting, paging) and the page layout.

A site (`domains/gpus/site`, `domains/funds/site`) brings its data, columns, filters and templates; its
templates extend `_layout.html` and include `_results.html` from here.
"""
