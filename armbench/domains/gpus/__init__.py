"""GPUs: TechPowerUp's GPU database as a website replica, and the `gpu_query` tool."""
from armbench.domains.spec import Domain

DOMAIN = Domain.in_folder(
    __file__,
    name="gpus",
    title="GPU specification database (website)",
    port_offset=0,
    app="armbench.domains.gpus.site.app:create_app",
    tools="armbench.domains.gpus.tools:TOOLS",
    build="armbench.domains.gpus.data.build:build",
)
TABLES = DOMAIN.tables
