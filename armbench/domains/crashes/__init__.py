"""Crashes: NHTSA FARS traffic fatalities and rates by state and year (1994-2013) as a website
replica, and `crash_query`."""
from armbench.domains.spec import Domain

DOMAIN = Domain.in_folder(
    __file__,
    name="crashes",
    title="NHTSA FARS, traffic fatalities by state (website)",
    port_offset=6,
    app="armbench.domains.crashes.site.app:create_app",
    tools="armbench.domains.crashes.tools:TOOLS",
    build="armbench.domains.crashes.data.build:build",
)
TABLES = DOMAIN.tables
