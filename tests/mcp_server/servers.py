"""Helpers of the MCP tests: ``stratagraph mcp`` started as a real process, and the SDK's own client connected
to it over stdio or streamable HTTP."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.processes import cli_args, running, server_env


def mcp_args(store: Path, *args: str) -> list[str]:
    return cli_args(store, "mcp", *args)


@asynccontextmanager
async def stdio_session(store: Path, *args: str, env: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    """The SDK's client on a server it starts itself over stdio (as Claude Desktop does)."""
    params = StdioServerParameters(command=sys.executable, args=mcp_args(store, *args)[1:], env=server_env(**(env or {})))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextmanager
def http_server(store: Path, *args: str, host: str = "127.0.0.1", env: dict[str, str] | None = None) -> Iterator[str]:
    """``stratagraph mcp --transport http`` as a child process; yields its /mcp URL once it listens."""
    with running(store, "mcp", "--transport", "http", *args, host=host, env=env) as base:
        yield f"{base}/mcp"


@asynccontextmanager
async def http_session(url: str, token: str | None = None) -> AsyncIterator[ClientSession]:
    """The SDK's streamable HTTP client, sending ``token`` as a bearer token."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(120, read=300)) as client,
        streamable_http_client(url, http_client=client) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session
