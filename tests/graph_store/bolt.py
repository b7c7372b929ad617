"""The Bolt server the tests run the Neo4j backend on.

* By default: one local ArcadeDB server per test session (:class:`~stratagraph.graph_store.arcadedb.LocalArcadeDB`,
  a child process on free 127.0.0.1 ports, started on first use) and a fresh database per test.
* With ``NEO4J_URI`` set (``NEO4J_USER``, ``NEO4J_PASSWORD``, ``NEO4J_DATABASE``): that server's database, which
  must be empty when the session starts (the suite refuses to touch a database with anything in it) and is
  emptied again for every test.

:func:`bolt_store` is the contract suite's factory: the same ``tmp_path`` gives the same database (a second
handle on it), a new one a fresh database.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from stratagraph.graph_store.arcadedb import LocalArcadeDB, arcadedb_available
from stratagraph.graph_store.neo4j import Neo4jGraphStore

#: short retries in tests: a dead server fails the write within about a second
TEST_RETRY_SECONDS = 1.0


@dataclass
class BoltTarget:
    """Where Bolt tests connect: a local ArcadeDB (databases per test) or a real Neo4j (one database)."""

    uri: str
    user: str
    password: str
    arcadedb: LocalArcadeDB | None = None
    fixed_database: str | None = None  # a real Neo4j: the one database the tests use
    _created: dict[str, str] = field(default_factory=dict)  # tmp path -> database
    _current: str | None = None  # a real Neo4j: the key the database was last emptied for

    @property
    def is_real_neo4j(self) -> bool:
        return self.arcadedb is None

    def database_for(self, key: str) -> str | None:
        """The database of a test (``key``: its tmp path), created (or emptied) on first use."""
        if self.arcadedb is None:
            if self._current != key:
                self._wipe()
                self._current = key
            return self.fixed_database
        if key not in self._created:
            name = "t" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]
            self.arcadedb.create_database(name)
            self._created[key] = name
        return self._created[key]

    def drop(self, key: str) -> None:
        """Drop a test's database (ArcadeDB) once its stores are closed."""
        name = self._created.pop(key, None)
        if name is not None and self.arcadedb is not None and self.arcadedb.running:
            self.arcadedb.drop_database(name)

    def store(self, key: str, **options: float) -> Neo4jGraphStore:
        options.setdefault("max_retry_time", TEST_RETRY_SECONDS)
        return Neo4jGraphStore(self.uri, self.user, self.password, self.database_for(key), **options)  # type: ignore[arg-type]

    def _wipe(self) -> None:
        import neo4j

        with (
            neo4j.GraphDatabase.driver(self.uri, auth=(self.user, self.password)) as driver,
            driver.session(database=self.fixed_database) as session,
        ):
            session.run("MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()

    def node_count(self) -> int:
        import neo4j

        with (
            neo4j.GraphDatabase.driver(self.uri, auth=(self.user, self.password)) as driver,
            driver.session(database=self.fixed_database) as session,
        ):
            return int(session.run("MATCH (n) RETURN count(n) AS c").single()["c"])

    def close(self) -> None:
        if self.arcadedb is not None:
            self.arcadedb.stop()


_target: BoltTarget | None = None
_root: tempfile.TemporaryDirectory[str] | None = None


def bolt_target() -> BoltTarget:
    """The session's Bolt target, started on first use; skips the test when there is none."""
    global _target, _root
    if _target is not None:
        return _target
    uri = os.environ.get("NEO4J_URI")
    if uri:
        target = BoltTarget(
            uri=uri,
            user=os.environ.get("NEO4J_USER", "neo4j"),
            password=os.environ.get("NEO4J_PASSWORD", ""),
            fixed_database=os.environ.get("NEO4J_DATABASE") or None,
        )
        found = target.node_count()
        if found:
            pytest.exit(
                f"NEO4J_URI={uri} database {target.fixed_database or '(default)'} holds {found} nodes: the Bolt tests "
                "empty their database for every test, so they only run on an empty one",
                returncode=2,
            )
    else:
        if not arcadedb_available():
            pytest.skip("no Bolt server: install arcadedb-embedded (the test extra) or set NEO4J_URI")
        _root = tempfile.TemporaryDirectory(prefix="stratagraph-arcadedb-")
        server = LocalArcadeDB(Path(_root.name)).start()
        target = BoltTarget(uri=server.uri, user=server.user, password=server.password, arcadedb=server)
    _target = target
    return target


def close_bolt_target() -> None:
    global _target, _root
    if _target is not None:
        _target.close()
        _target = None
    if _root is not None:
        _root.cleanup()
        _root = None


def bolt_store(path: Path) -> Neo4jGraphStore:
    """The contract suite's factory: the database of ``path`` on the session's Bolt server."""
    return bolt_target().store(str(path))
