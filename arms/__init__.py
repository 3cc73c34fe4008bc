"""Arms: the tool sets an agent gets. `tooled` = browsing tools + the domain's typed tools."""
