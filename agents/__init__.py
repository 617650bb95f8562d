"""Machine access for agents: an MCP server whose tools read the /v1 API over HTTP.

`tools` defines the tools from the contract's endpoint tables, `apiclient` is the bounded
HTTP client that calls the edge, `server` wires both into an MCP server (stdio or
streamable HTTP) and `cli` is the `affdir-mcp` command. Nothing here reads the store or
dist/: an agent sees exactly what the API answers.
"""
