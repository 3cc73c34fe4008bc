"""The fund screener replica site: a Morningstar-like screener rendered from `funds.parquet`.

It keeps the traps of real screeners: funds closed to new investors are hidden unless a checkbox
(off by default) is ticked, and the default order is a hidden "relevance" score that the page
never names. 100 rows a page; one page per fund. Every metric is generated (see DATA.md) and
every page's footer says so.
"""
