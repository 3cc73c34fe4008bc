"""Funds: a US mutual fund screener website replica, and the `fund_screener` tool."""
from armbench.domains.spec import Domain

DOMAIN = Domain.in_folder(
    __file__,
    name="funds",
    title="US mutual fund screener (website)",
    port_offset=2,
    app="armbench.domains.funds.site.app:create_app",
    tools="armbench.domains.funds.tools:TOOLS",
    build="armbench.domains.funds.data.build:build",
)
TABLES = DOMAIN.tables
