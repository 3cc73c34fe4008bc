"""The mortality replica site: a CDC "Stats of the States"-like website rendered from the mortality table.

A page per cause and year (every state's age-adjusted death rate and deaths, sortable), a page per
state and year (its ten causes ranked by deaths), a national page per cause (the United States over
the years), an index and an about page. No page compares a state across years for one cause, or
lists several years' state rates at once.
"""
