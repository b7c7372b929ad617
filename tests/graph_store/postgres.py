"""A real PostgreSQL server for the tests: the Debian package's binaries (``postgresql``; ``.ci/run`` installs
it), a throw-away cluster on a free 127.0.0.1 port started once per test session on first use, a database per
test, ``restart()`` for the tests that outlive one. As root (CI) the server runs as the ``postgres`` user the
package creates, since PostgreSQL refuses to run as root."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

USER = "stratagraph"


def _bindir() -> Path | None:
    """The directory of initdb and pg_ctl: the newest /usr/lib/postgresql/*/bin, else the PATH's."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class PostgresServer:
    bindir: Path
    root: Path
    port: int
    run_as: str | None  # the system user the server runs as (root cannot)

    @property
    def data(self) -> Path:
        return self.root / "data"

    def _run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.run_as:
            cmd = ["runuser", "-u", self.run_as, "--", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    def init(self) -> PostgresServer:
        if self.run_as:
            entry = pwd.getpwnam(self.run_as)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", USER, "--auth=trust", "--encoding=UTF8", "--no-sync")
        return self

    def start(self) -> PostgresServer:
        options = f"-p {self.port} -k {self.root} -h 127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=60"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-o", options, "-w", "-t", "60", "start")
        return self

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def restart(self) -> None:
        """Stop the server (closing every client's connection) and start it again on the same port."""
        self.stop()
        self.start()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new empty database; its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _unavailable(reason: str) -> None:
    """Skip the test, except in CI (``CI=true``), where .ci/system-packages installs PostgreSQL: fail there."""
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


_server: PostgresServer | None = None
_root: tempfile.TemporaryDirectory[str] | None = None


def postgres_server() -> PostgresServer:
    """The session's server, started on first use; skips the test when PostgreSQL is not installed."""
    global _server, _root
    if _server is not None:
        return _server
    bindir = _bindir()
    if bindir is None:
        _unavailable("PostgreSQL is not installed (apt-get install postgresql; .ci/system-packages does)")
    run_as = None
    if os.geteuid() == 0:
        try:
            run_as = pwd.getpwnam("postgres").pw_name
        except KeyError:
            _unavailable("running as root without a 'postgres' user to run PostgreSQL as")
    _root = tempfile.TemporaryDirectory(prefix="stratagraph-pg-")
    server = PostgresServer(bindir=bindir, root=Path(_root.name), port=_free_port(), run_as=run_as)
    _server = server.init().start()
    return _server


def close_postgres_server() -> None:
    global _server, _root
    if _server is not None:
        try:
            _server.stop()
        except (RuntimeError, subprocess.TimeoutExpired):
            pass
        _server = None
    if _root is not None:
        _root.cleanup()
        _root = None
