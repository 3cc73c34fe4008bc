"""Drugs@FDA: the FDA's approved-drug data files (June 2018) as a website replica, and `drug_query`."""
from armbench.domains.spec import Domain

DOMAIN = Domain.in_folder(
    __file__,
    name="drugs",
    title="Drugs@FDA, FDA-approved drugs (website)",
    port_offset=7,
    app="armbench.domains.drugs.site.app:create_app",
    tools="armbench.domains.drugs.tools:TOOLS",
    build="armbench.domains.drugs.data.build:build",
)
TABLES = DOMAIN.tables
