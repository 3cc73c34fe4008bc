"""The kit every arm uses: the Tool base, browser, sandbox, browser and web tools, table queries, MCP client."""
