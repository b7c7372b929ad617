"""The real `stratagraph` command in a fresh process: JSON shapes, exit codes, messages."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import EXAMPLES, cli_json, run_cli

from stratagraph.schema import ALL_EDGE_TYPES, ALL_LABELS


def test_ingest_stats_export_delete_round_trip(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    code, data, _ = cli_json("--store", store, "ingest", str(EXAMPLES), cwd=EXAMPLES.parent)
    assert code == 0 and data["failed"] == 0
    assert set(data) == {"documents", "failed"}
    entry = data["documents"][0]
    assert set(entry) == {"source", "doc_id", "status", "error"}
    assert {d["status"] for d in data["documents"]} == {"added"}
    assert all(d["doc_id"].startswith("examples/") for d in data["documents"])

    code, stats, _ = cli_json("stats", "--store", store)
    assert code == 0
    assert set(stats["nodes"]) == set(ALL_LABELS) and set(stats["edges"]) == set(ALL_EDGE_TYPES)
    assert stats["nodes"]["Document"] > 0 and stats["nodes"]["Section"] > 0 and stats["nodes"]["Chunk"] > 0
    assert stats["max_section_level"] >= 3

    export = run_cli("--store", store, "export", "--json")
    assert export.returncode == 0 and export.stdout.count("\n") == 1
    dumped = json.loads(export.stdout)
    assert dumped["nodes"] == sorted(dumped["nodes"], key=lambda n: n["id"])

    budget = next(d["doc_id"] for d in data["documents"] if "budget" in d["doc_id"])
    code, deleted, _ = cli_json("--store", store, "delete", budget)
    assert code == 0 and deleted["deleted"] is True and deleted["nodes_deleted"] > 0
    code, stats2, _ = cli_json("--store", store, "stats")
    assert stats2["nodes"]["Document"] == stats["nodes"]["Document"] - 1


def test_unknown_document_id_exits_1_with_a_message(tmp_path: Path) -> None:
    proc = run_cli("--store", str(tmp_path / "s"), "delete", "no/such/doc.md")
    assert proc.returncode == 1
    assert "unknown document id" in proc.stderr and "no/such/doc.md" in proc.stderr


def test_usage_error_exits_2(tmp_path: Path) -> None:
    assert run_cli("ingest").returncode == 2
    assert run_cli("frobnicate").returncode == 2


def test_bad_input_exit_code_and_one_line_messages(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "ok.md").write_text("# Title\n\nSome content about rivers.\n", "utf-8")
    (folder / "empty.md").write_text("", "utf-8")
    (folder / "blob.txt").write_bytes(b"\x00\x01\x02\xff" * 100)
    (folder / "old.txt").write_bytes("Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e, na\u00efve fa\u00e7ade.\n".encode("latin-1"))
    code, data, stderr = cli_json("--store", str(tmp_path / "s"), "ingest", str(folder), cwd=tmp_path)
    assert code == 1 and data["failed"] == 2
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 2
    assert any("in/empty.md" in e for e in errors) and any("in/blob.txt" in e for e in errors)
    warnings = [line for line in stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "in/old.txt" in warnings[0] and "decoded as" in warnings[0]


def test_missing_path_is_reported(tmp_path: Path) -> None:
    code, data, stderr = cli_json("--store", str(tmp_path / "s"), "ingest", str(tmp_path / "absent.md"))
    assert code == 1 and data["failed"] == 1
    assert "absent.md" in stderr


def test_unreachable_chroma_server_stops_the_run_with_one_message(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    doc = tmp_path / "a.md"
    doc.write_text("# A\n\nText.\n", "utf-8")
    proc = run_cli(
        "--store", str(tmp_path / "s"), "ingest", str(doc), "--json",
        env={"STRATAGRAPH_CHROMA_URL": f"http://127.0.0.1:{port}"},
    )
    assert proc.returncode == 1
    assert json.loads(proc.stdout) == {"error": json.loads(proc.stdout)["error"]}
    assert f"127.0.0.1:{port} is unreachable" in proc.stderr and "Traceback" not in proc.stderr


def test_a_store_that_is_not_a_database_is_reported_not_overwritten(tmp_path: Path) -> None:
    store = tmp_path / "s"
    store.mkdir()
    (store / "graph.sqlite").write_bytes(b"precious bytes, not sqlite")
    for args in (("stats",), ("export",), ("delete", "x.md")):
        proc = run_cli("--store", str(store), *args)
        assert proc.returncode == 1 and "not a database" in proc.stderr and "Traceback" not in proc.stderr
    assert (store / "graph.sqlite").read_bytes() == b"precious bytes, not sqlite"


def test_invalid_settings_are_a_usage_error(tmp_path: Path) -> None:
    proc = run_cli("--store", str(tmp_path / "s"), "stats", env={"STRATAGRAPH_CHUNK_TOKENS": "many"})
    assert proc.returncode == 2 and "chunk_tokens" in proc.stderr


def test_json_field_names_are_configurable(tmp_path: Path) -> None:
    records = tmp_path / "wiki.jsonl"
    records.write_text(
        '{"key": "p1", "name": "Alpha", "body": "Alpha is a river."}\n'
        '{"key": "p2", "name": "Beta", "body": "Beta is a town."}\n',
        "utf-8",
    )
    code, data, _ = cli_json(
        "--store", str(tmp_path / "s"), "ingest", str(records),
        "--title-field", "name", "--text-field", "body", "--id-field", "key", cwd=tmp_path,
    )
    assert code == 0
    assert [d["doc_id"] for d in data["documents"]] == ["wiki.jsonl:p1", "wiki.jsonl:p2"]
