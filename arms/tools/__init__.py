"""Typed query tools, by replica domain: the `tooled` arm adds a domain's tools to browsing."""

from arms.base import Tool
from arms.tools.funds import FundScreener
from arms.tools.gpu_query import GpuQuery
from arms.tools.worldbank import GetSeries, ListEconomies, RankYear

TOOLS_BY_DOMAIN: dict[str, list[type[Tool]]] = {
    "gpus": [GpuQuery],
    "worldbank": [ListEconomies, GetSeries, RankYear],
    "funds": [FundScreener],
}
