"""``stratagraph mcp``: the store over the Model Context Protocol (the official ``mcp`` SDK), for agents
outside Python (Claude Desktop, IDEs, agent frameworks). :func:`build_server` makes the server;
:func:`run` serves it over stdio or streamable HTTP."""

from stratagraph.mcp_server.server import ASK_TOOLS, build_server, run

__all__ = ["ASK_TOOLS", "build_server", "run"]
