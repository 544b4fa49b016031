"""OpenEnv and MCP: OpenEnv's routes on our app (`openenv_routes`), its `Environment`
(`data_cleaning_environment`) and session server (`sessions`), and one episode per MCP
session (`mcp_episode`, `mcp_gateway`)."""
