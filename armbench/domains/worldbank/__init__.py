"""World Bank: the Indicators API v2 as a replica, and the list_economies/get_series/rank_year tools."""
from armbench.domains.spec import Domain

DOMAIN = Domain.in_folder(
    __file__,
    name="worldbank",
    title="World Bank Indicators API v2",
    port_offset=1,
    app="armbench.domains.worldbank.api.app:create_app",
    tools="armbench.domains.worldbank.tools:TOOLS",
    build="armbench.domains.worldbank.data.build:build",
)
TABLES = DOMAIN.tables
