"""``read_cypher``: a read-only, parameterised Cypher query over the graph, for agents on a Cypher backend.

Offered by :func:`stratagraph.tools.make_tools` only when the graph store runs Cypher (the Neo4j backend,
:class:`~stratagraph.graph_store.base.CypherReader`). Three guards, the first two before anything is sent:

1. :func:`vet_cypher` reads the query as Cypher tokens (comments dropped; string literals, backtick-quoted
   names and parameters kept apart, so ``'please DELETE me'`` is only a string) and refuses every write
   clause (``CREATE``, ``MERGE``, ``SET``, ``DELETE``, ``DETACH DELETE``, ``REMOVE``, ``DROP``, ``LOAD CSV``,
   ``FOREACH``, ``INSERT``, ``CALL { ... } IN TRANSACTIONS``, administration commands and ``USE``), more than
   one statement, and any procedure call outside :data:`ALLOWED_PROCEDURES` (no ``apoc.cypher.doIt``, no
   ``apoc.periodic.iterate``, no ``dbms.*``); functions of the namespaces in :data:`DENIED_FUNCTION_PREFIXES`
   are refused too.
2. Where the server reports it (capability ``explain_query_type``), the query's ``EXPLAIN`` must say it only
   reads.
3. It runs in a READ managed transaction (``execute_read``) with a server-side time-out, and at most ``limit``
   rows come back.

A refusal is a :class:`~langchain_core.tools.ToolException` saying why, so an agent can rewrite its query.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, Field

from stratagraph.graph_store.base import CypherQueryError, CypherReader
from stratagraph.retrieval import RetrievalContext
from stratagraph.tools.common import ToolOutput, build_tool, clip

__all__ = [
    "ALLOWED_PROCEDURES",
    "DENIED_FUNCTION_PREFIXES",
    "MAX_ROWS",
    "QUERY_TIMEOUT_S",
    "ReadCypherArgs",
    "is_cypher_backend",
    "read_cypher",
    "read_cypher_tool",
    "vet_cypher",
]

MAX_ROWS = 200  # the most rows one call returns
QUERY_TIMEOUT_S = 10.0  # server-side time-out of one query
MAX_QUERY_CHARS = 8000

#: read-only procedures a query may CALL (exact names)
ALLOWED_PROCEDURES = frozenset(
    {
        "db.labels",
        "db.relationshipTypes",
        "db.propertyKeys",
        "db.schema.visualization",
        "db.schema.nodeTypeProperties",
        "db.schema.relTypeProperties",
        "db.index.fulltext.queryNodes",
        "db.index.fulltext.queryRelationships",
    }
)

#: function namespaces that run other Cypher, change data or reach outside the graph
DENIED_FUNCTION_PREFIXES = ("apoc.cypher.", "apoc.periodic.", "apoc.do.", "apoc.load.", "apoc.export.", "dbms.", "gds.")

#: clauses and commands that write or administer, refused wherever they appear as keywords
WRITE_KEYWORDS = {
    "CREATE": "CREATE writes",
    "MERGE": "MERGE writes",
    "SET": "SET writes properties or labels",
    "DELETE": "DELETE removes data",
    "DETACH": "DETACH DELETE removes data",
    "REMOVE": "REMOVE deletes properties or labels",
    "DROP": "DROP changes the schema or databases",
    "LOAD": "LOAD CSV reads files into the graph",
    "FOREACH": "FOREACH runs updating clauses",
    "INSERT": "INSERT writes",
    "ALTER": "ALTER is an administration command",
    "GRANT": "GRANT is an administration command",
    "DENY": "DENY is an administration command",
    "REVOKE": "REVOKE is an administration command",
    "RENAME": "RENAME is an administration command",
    "START": "START is an administration command",
    "STOP": "STOP is an administration command",
    "TERMINATE": "TERMINATE is an administration command",
    "ENABLE": "ENABLE is an administration command",
    "USE": "USE switches to another database",
}

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*.*?\*/)
  | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<quoted>`(?:[^`]|``)*`)
  | (?P<param>\$(?:[A-Za-z_][A-Za-z_0-9]*|`(?:[^`]|``)*`|[0-9]+))
  | (?P<number>[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
  | (?P<word>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<unterminated>/\*|['"`])
  | (?P<punct>.)
    """,
    re.DOTALL | re.VERBOSE,
)


@dataclass(frozen=True)
class Token:
    kind: str  # string | quoted | param | number | word | punct
    text: str

    @property
    def name(self) -> str:
        """A word or backtick-quoted name as written (quotes removed)."""
        return self.text[1:-1].replace("``", "`") if self.kind == "quoted" else self.text


def tokenize(query: str) -> list[Token]:
    """Cypher tokens without whitespace and comments; ValueError for an unterminated string or comment."""
    out = []
    for match in _TOKEN.finditer(query):
        kind = match.lastgroup or "punct"
        if kind in ("ws", "line_comment", "block_comment"):
            continue
        if kind == "unterminated":
            what = "comment" if match.group().startswith("/") else "quoted text"
            raise ValueError(f"unterminated {what} at character {match.start()}")
        out.append(Token(kind, match.group()))
    return out


def _dotted_name(tokens: list[Token], start: int) -> tuple[str, int]:
    """The dotted name starting at ``tokens[start]`` (words or quoted names joined by '.') and the index after it."""
    parts = []
    i = start
    while i < len(tokens) and tokens[i].kind in ("word", "quoted"):
        parts.append(tokens[i].name)
        if i + 2 < len(tokens) and tokens[i + 1].text == "." and tokens[i + 2].kind in ("word", "quoted"):
            i += 2
        else:
            i += 1
            break
    return ".".join(parts), i


def vet_cypher(query: str) -> None:
    """Refuse (``ToolException`` saying why) a query that is not a single read-only statement; see the
    module docstring. Nothing is sent to the server."""
    if not query.strip():
        raise ToolException("The query is empty: pass one read-only Cypher statement (MATCH ... RETURN ...).")
    if len(query) > MAX_QUERY_CHARS:
        raise ToolException(f"The query is longer than {MAX_QUERY_CHARS} characters; write a shorter one.")
    try:
        tokens = tokenize(query)
    except ValueError as exc:
        raise ToolException(f"Refused: the query cannot be read safely ({exc}).") from exc
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1].text if i > 0 else ""
        nxt = tokens[i + 1].text if i + 1 < len(tokens) else ""
        if tok.kind == "punct" and tok.text == ";" and any(t.text != ";" for t in tokens[i + 1 :]):
            raise ToolException("Refused: only one statement per call (remove the ';' and what follows).")
        if tok.kind != "word" or prev in (".", ":") or nxt == ":":
            continue  # a property, label, relationship type or map key, not a keyword
        word = tok.text.upper()
        if word in WRITE_KEYWORDS:
            raise ToolException(
                f"Refused: this tool only reads, and {WRITE_KEYWORDS[word]} (found {tok.text!r}). "
                "Use MATCH / OPTIONAL MATCH / WITH / RETURN."
            )
        if word == "TRANSACTIONS" and prev.upper() == "IN":
            raise ToolException("Refused: CALL { ... } IN TRANSACTIONS is for batched writes; this tool only reads.")
        if word == "CALL":
            if nxt in ("{", "("):
                continue  # a subquery: its clauses are checked like the rest of the query
            name, _ = _dotted_name(tokens, i + 1)
            if name not in ALLOWED_PROCEDURES:
                raise ToolException(
                    f"Refused: procedure {name or '?'!r} is not on the read-only allow-list "
                    f"({', '.join(sorted(ALLOWED_PROCEDURES))})."
                )
        elif i + 1 < len(tokens) and nxt == "." and prev != "CALL":
            name, end = _dotted_name(tokens, i)
            if end < len(tokens) and tokens[end].text == "(" and name.lower().startswith(DENIED_FUNCTION_PREFIXES):
                raise ToolException(f"Refused: function {name!r} can run other queries or change data.")


def is_cypher_backend(ctx: RetrievalContext) -> bool:
    """Whether the context's graph store runs Cypher (the Neo4j backend)."""
    return isinstance(ctx.graph, CypherReader)


class ReadCypherArgs(BaseModel):
    query: str = Field(
        description="One read-only Cypher statement with $parameters for every value, e.g. "
        "\"MATCH (e:Entity {name: $name})<-[:MENTIONS]-(c:Chunk) RETURN c.id, c.text LIMIT 5\". "
        "Writes, APOC and dbms procedures are refused."
    )
    parameters: dict[str, Any] = Field(
        default_factory=dict, description="Values of the query's $parameters, by name (JSON values)."
    )
    limit: int = Field(50, ge=1, le=MAX_ROWS, description="The most rows to return (1-200).")


def read_cypher(ctx: RetrievalContext, args: ReadCypherArgs) -> ToolOutput:
    """Vet, check with EXPLAIN where the server reports it, then run in a read transaction."""
    graph = ctx.graph
    if not isinstance(graph, CypherReader):
        raise ToolException("read_cypher needs a Cypher graph backend (STRATAGRAPH_GRAPH=neo4j); this store is not one.")
    vet_cypher(args.query)
    try:
        verdict = graph.explain_is_read_only(args.query, args.parameters)
        if verdict is False:
            raise ToolException("Refused: the server's EXPLAIN says this query writes; this tool only reads.")
        result = graph.run_read(args.query, args.parameters, timeout=QUERY_TIMEOUT_S, limit=args.limit)
    except CypherQueryError as exc:
        raise ToolException(f"The query failed: {exc}") from exc
    lines = [f"columns: {', '.join(result.columns)}"]
    lines += [clip(json.dumps(row, ensure_ascii=False, default=str), 1000) for row in result.rows]
    count = f"{len(result.rows)} row{'s' if len(result.rows) != 1 else ''}"
    lines.append(f"({count}; more rows were cut: add LIMIT or narrow the query)" if result.truncated else f"({count})")
    artifact = {"columns": result.columns, "rows": result.rows, "truncated": result.truncated}
    return "\n".join(lines), artifact


DESCRIPTION = (
    "Run one read-only Cypher query over the knowledge graph (Neo4j backend) and get its rows. Nodes are "
    "(:Node:Document|Section|Chunk|Entity|Fact) with id, label, doc_ids, props (all props as a JSON string) and "
    "their scalar props as plain properties (Chunk.text, Entity.name, Entity.type, Fact.description, "
    "Section.title, Section.level, Document.title); relationships HAS_SECTION, HAS_CHUNK, NEXT, MENTIONS "
    "(Chunk->Entity), IN_FACT (Entity->Fact), SUPPORTED_BY (Fact->Chunk), RELATED (Entity->Entity, predicate), "
    "CITES, REFERS_TO, DESCRIBED_BY, SIMILAR, each with id, weight, doc_ids. Pass every value as a $parameter. "
    "Only reads: write clauses and procedures outside a small allow-list are refused."
)


def read_cypher_tool(ctx: RetrievalContext | None = None) -> StructuredTool:
    return build_tool(ctx, "read_cypher", DESCRIPTION, ReadCypherArgs, read_cypher)
