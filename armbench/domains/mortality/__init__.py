"""Mortality: CDC/NCHS leading causes of death by state, 1999-2017, as a "Stats of the States"-like
website replica, and `mortality_query`."""
from armbench.domains.spec import Domain

DOMAIN = Domain.in_folder(
    __file__,
    name="mortality",
    title="CDC/NCHS, leading causes of death by state (website)",
    port_offset=5,
    app="armbench.domains.mortality.site.app:create_app",
    tools="armbench.domains.mortality.tools:TOOLS",
    build="armbench.domains.mortality.data.build:build",
)
TABLES = DOMAIN.tables
