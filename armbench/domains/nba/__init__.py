"""NBA: Basketball-Reference's seasons, players and drafts as a website replica, and `nba_query`."""
from armbench.domains.spec import Domain

DOMAIN = Domain.in_folder(
    __file__,
    name="nba",
    title="Basketball-Reference, NBA statistics (website)",
    port_offset=4,
    app="armbench.domains.nba.site.app:create_app",
    tools="armbench.domains.nba.tools:TOOLS",
    build="armbench.domains.nba.data.build:build",
)
TABLES = DOMAIN.tables
