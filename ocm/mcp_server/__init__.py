"""The `ocm` MCP server (`ocm mcp`, `python -m ocm.mcp_server`).

Kept import-free: `mcp` and the facade load only when `ocm.mcp_server.server` is imported.
"""
