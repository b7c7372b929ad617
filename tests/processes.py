"""A stratagraph server (``mcp --transport http``, ``serve``) as a real child process on a free 127.0.0.1
port, for the tests that drive it as its users would."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import REPO


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(**extra: str) -> dict[str, str]:
    """The test's environment with this checkout first on the import path."""
    path = [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path), **extra}


def cli_args(store: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "stratagraph.cli", "--store", str(store), *args]


@contextmanager
def running(store: Path, *args: str, host: str = "127.0.0.1", env: dict[str, str] | None = None) -> Iterator[str]:
    """``stratagraph --store STORE <args> --host HOST --port <free>`` as a child process; yields
    ``http://127.0.0.1:<port>`` once it listens (whatever it binds), and stops it afterwards."""
    port = free_port()
    proc = subprocess.Popen(
        cli_args(store, *args, "--host", host, "--port", str(port)), cwd=REPO, env=server_env(**(env or {})),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
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
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
