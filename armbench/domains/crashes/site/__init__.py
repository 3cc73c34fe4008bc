"""The crashes replica site: an NHTSA/IIHS-like website rendered from the crashes tables.

A page per year (every state's fatalities and rates, sortable by column, with the U.S. total), a
page per state (its 20 years and FiveThirtyEight driver profile), the national trend and an about
page. No page filters states, or lists a figure across both states and years: a question about
several years reads several pages.
"""
