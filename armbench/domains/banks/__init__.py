"""Banks: the FDIC's bank failures and assistance transactions as a website replica, and `bank_failure_query`."""
from armbench.domains.spec import Domain

DOMAIN = Domain.in_folder(
    __file__,
    name="banks",
    title="FDIC, bank failures and assistance (website)",
    port_offset=8,
    app="armbench.domains.banks.site.app:create_app",
    tools="armbench.domains.banks.tools:TOOLS",
    build="armbench.domains.banks.data.build:build",
)
TABLES = DOMAIN.tables
