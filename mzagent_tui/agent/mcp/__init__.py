"""MCP servers as tools: servers named in the user config (or by an ACP client) run as stdio
subprocesses, and each of their tools joins the registry as `mcp__SERVER__TOOL`."""
