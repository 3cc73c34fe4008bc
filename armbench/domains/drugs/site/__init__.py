"""The Drugs@FDA replica site: a Drugs@FDA-like website rendered from the drugs tables.

A search by drug name or active ingredient, an application page per application (products and
submission history, with review priority and orphan status), and a report per month of the
original approvals and tentative approvals acted on that month. No page lists approvals across
months by chemical type, review priority or orphan status.
"""
