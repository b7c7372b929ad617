"""Helpers of the MCP tests: ``stratagraph mcp`` started as a real process, and the SDK's own client connected
to it over stdio or streamable HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import REPO


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(**extra: str) -> dict[str, str]:
    path = [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path), **extra}


def mcp_args(store: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "stratagraph.cli", "--store", str(store), "mcp", *args]


@asynccontextmanager
async def stdio_session(store: Path, *args: str, env: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    """The SDK's client on a server it starts itself over stdio (as Claude Desktop does)."""
    params = StdioServerParameters(command=sys.executable, args=mcp_args(store, *args)[1:], env=server_env(**(env or {})))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextmanager
def http_server(store: Path, *args: str, host: str = "127.0.0.1", env: dict[str, str] | None = None) -> Iterator[str]:
    """``stratagraph mcp --transport http`` as a child process on a free port; yields its /mcp URL once it
    listens (on 127.0.0.1, whatever it binds)."""
    port = free_port()
    proc = subprocess.Popen(
        mcp_args(store, "--transport", "http", "--host", host, "--port", str(port), *args),
        env=server_env(**(env or {})), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"the server exited ({proc.returncode}):\n{proc.stderr.read()}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError("the server did not listen within 120 s") from None
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


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
