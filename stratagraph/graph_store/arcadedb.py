"""A local ArcadeDB server speaking Bolt, in a child process: the real Bolt server tests and benchmarks use.

ArcadeDB (``pip install arcadedb-embedded``, which bundles its own JRE) answers the official ``neo4j`` driver
over Bolt (it reports ``Neo4j/5.26.0 compatible``), so :class:`~stratagraph.graph_store.neo4j.Neo4jGraphStore`
can be tested on a real server without a Neo4j install. The server runs in its own Python process (the JVM
lives there, never in the caller's process, and stopping it cannot take the caller down), bound to
127.0.0.1 on free ports. Databases are created and dropped over ArcadeDB's HTTP API.

    with LocalArcadeDB(tmp_dir) as server:
        server.create_database("g1")
        store = Neo4jGraphStore(server.uri, "root", server.password, database="g1")

This module is a test and benchmark aid; the product talks to any Bolt server through ``neo4j.py``.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

__all__ = ["ArcadeDBError", "LocalArcadeDB", "arcadedb_available", "free_port"]

READY = "STRATAGRAPH-ARCADEDB-READY"
START_TIMEOUT_S = 120.0


class ArcadeDBError(RuntimeError):
    """The local server could not be started or did not answer."""


def arcadedb_available() -> bool:
    """Whether ``arcadedb-embedded`` is installed (the ``test`` extra installs it)."""
    import importlib.util

    return importlib.util.find_spec("arcadedb_embedded") is not None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalArcadeDB:
    """An ArcadeDB server with the Bolt plugin in a child process, on 127.0.0.1 (module docstring)."""

    def __init__(self, root: Path | str, password: str = "stratagraph-test") -> None:
        self.root = Path(root)
        self.password = password
        self.user = "root"
        self.http_port = 0
        self.bolt_port = 0
        self._proc: subprocess.Popen[str] | None = None
        self._log: list[str] = []

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    # ---------------------------------------------------------------- lifecycle
    def start(self) -> LocalArcadeDB:
        """Start the server (on the same ports as before when restarting) and wait until Bolt answers."""
        if self.running:
            return self
        self.root.mkdir(parents=True, exist_ok=True)
        self.http_port = self.http_port or free_port()
        self.bolt_port = self.bolt_port or free_port()
        cmd = [
            sys.executable,
            "-m",
            "stratagraph.graph_store.arcadedb",
            "--root",
            str(self.root),
            "--http-port",
            str(self.http_port),
            "--bolt-port",
            str(self.bolt_port),
        ]
        env = {**os.environ, "STRATAGRAPH_ARCADEDB_PASSWORD": self.password}
        self._log = []
        self._proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=str(self.root),  # ArcadeDB writes ./log there
        )
        ready = threading.Event()

        def pump(stream) -> None:
            for line in stream:
                self._log.append(line.rstrip())
                del self._log[:-200]
                if READY in line:
                    ready.set()

        threading.Thread(target=pump, args=(self._proc.stdout,), daemon=True).start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready.wait(0.1):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                tail = "\n".join(self._log[-20:])
                self.stop(kill=True)
                raise ArcadeDBError(f"ArcadeDB did not start on 127.0.0.1:{self.bolt_port}:\n{tail}")
        return self

    def stop(self, kill: bool = False) -> None:
        """Stop the server: gracefully (it closes its databases), or ``kill`` it at once (a crash)."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        if kill:
            proc.kill()
        else:
            try:
                proc.stdin.close()  # type: ignore[union-attr] - the child stops when its stdin closes
            except OSError:
                pass
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)

    def restart(self) -> LocalArcadeDB:
        self.stop()
        return self.start()

    def __enter__(self) -> LocalArcadeDB:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    # ---------------------------------------------------------------- databases (HTTP API)
    def _server_command(self, command: str) -> None:
        body = json.dumps({"command": command}).encode("utf-8")
        token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode("ascii")
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.http_port}/api/v1/server",
            data=body,
            headers={"Content-Type": "application/json", "Authorization": f"Basic {token}"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as reply:
                reply.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:500]
            raise ArcadeDBError(f"ArcadeDB refused {command!r}: HTTP {exc.code} {detail}") from exc

    def has_database(self, name: str) -> bool:
        """Whether the server's root holds a database ``name`` (created here before, perhaps by an earlier run)."""
        return (self.root / "databases" / "databases" / name).is_dir()

    def create_database(self, name: str) -> None:
        self._server_command(f"create database {name}")

    def drop_database(self, name: str) -> None:
        self._server_command(f"drop database {name}")


# ------------------------------------------------------------------------------------------ child process


def _serve(root: str, http_port: int, bolt_port: int, password: str) -> None:
    """Run the server until stdin closes or SIGTERM arrives, then stop it and leave without running the
    interpreter's shutdown (the JVM bridge can crash there)."""
    import arcadedb_embedded

    server = arcadedb_embedded.create_server(
        root_path=str(Path(root) / "databases"),
        root_password=password,
        config={
            "host": "127.0.0.1",
            "http_port": http_port,
            "server_plugins": "Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
            "bolt_port": bolt_port,
        },
    )
    server.start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())

    def watch_stdin() -> None:
        sys.stdin.read()
        done.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    print(READY, flush=True)
    done.wait()
    try:
        server.stop()
    finally:
        sys.stdout.flush()
        os._exit(0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run a local ArcadeDB server with Bolt (child process).")
    parser.add_argument("--root", required=True)
    parser.add_argument("--http-port", type=int, required=True)
    parser.add_argument("--bolt-port", type=int, required=True)
    args = parser.parse_args(argv)
    _serve(args.root, args.http_port, args.bolt_port, os.environ["STRATAGRAPH_ARCADEDB_PASSWORD"])


if __name__ == "__main__":
    main()
