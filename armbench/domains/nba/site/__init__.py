"""The NBA replica site: a Basketball-Reference-like website rendered from the nba tables.

A season page per season (one long per-game table of every player, sortable by column) and its
totals page (season totals, steals, blocks, shooting percentages, teams, row id), a player
page per player (bio, first NBA draft pick, career rows), a draft page per year and a player index
by letter. No page lists players across seasons by birthday or draft class with stats.
"""
