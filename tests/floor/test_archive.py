"""`tabled floor archive`: a month of raw lines out to a file and its manifest, and back, on a
real floor (nats-server, PostgreSQL, `tabled floor` running beside it).

Two tables play across a month boundary in January 2025 (so a table's chain runs from an
archived month into a live one). January is archived; a byte of its file changed, or its
manifest edited (even to agree with itself), is refused on restore, one line, exit 2, the
database unchanged; the untouched archive is restored, every stored line hashes and chains
again from seq 1 to the last, and the floor's API serves January's lines again."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from daemon.floor.synthetic import SyntheticTable
from daemon.journal.format import GENESIS
from tests.daemon.cli_support import tabled
from tests.floor.floor_support import FloorEnv

JANUARY = "journal_lines_y2025m01"


def _lines() -> dict[str, list[bytes]]:
    # T01: from 23:58:00 on 31 January, a line a second: 120 lines in January, 180 in February.
    t01 = SyntheticTable(
        "T01", wall=datetime(2025, 1, 31, 23, 57, 59, tzinfo=UTC).timestamp(), step=1.0
    )
    t02 = SyntheticTable("T02", wall=datetime(2025, 1, 15, 12, tzinfo=UTC).timestamp(), step=2.0)
    return {"T01": t01.lines(300), "T02": t02.lines(200)}


def _archive(env: FloorEnv, *args: str) -> tuple[int, str, str]:
    done = tabled("floor", "archive", "--config", str(env.config), *args,
                  TABLED_TOKEN=env.tokens["admin"])  # fmt: skip
    # stderr: the log's lines (JSON), then the command's own: one line when it refuses.
    said = [line for line in done.stderr.splitlines() if line.startswith("tabled floor archive")]
    assert len(said) <= 1, done.stderr
    return done.returncode, done.stdout, "".join(line + "\n" for line in said)


def _chain_ok(env: FloorEnv, table: str, lines: list[bytes]) -> None:
    """The floor's holding of `table`: every line, byte for byte, each hashing to its hash and
    naming the one before as prev, from GENESIS."""
    rows = env.psql(
        "SELECT seq, hash, prev, line FROM journal_lines WHERE table_id = %s ORDER BY seq", table
    )
    assert [bytes(r[3]) for r in rows] == lines
    prev = bytes.fromhex(GENESIS)
    for seq, digest, link, line in rows:
        assert hashlib.sha256(bytes(line)).digest() == bytes(digest), seq
        assert bytes(link) == prev, seq
        prev = bytes(digest)


def _january(env: FloorEnv) -> int:
    """The lines of January 2025 the floor holds."""
    rows = env.psql(
        "SELECT count(*) FROM journal_lines WHERE ts >= '2025-01-01Z' AND ts < '2025-02-01Z'"
    )
    return int(rows[0][0])


def _copy(files: list[Path], where: Path) -> list[Path]:
    where.mkdir()
    return [Path(shutil.copy2(f, where / f.name)) for f in files]


def test_archive_tamper_refused_then_restore(env: FloorEnv, tmp_path: Path) -> None:
    lines = _lines()
    floor = env.start_floor()
    asyncio.run(env.publish([line for ls in lines.values() for line in ls]))
    asyncio.run(env.wait_committed(floor, {"T01": 300, "T02": 200}))
    january = _january(env)
    assert january == 120 + 200

    out = tmp_path / "archives"
    out.mkdir()
    code, _, err = _archive(env, "--out", str(out), "--month", f"{datetime.now(UTC):%Y-%m}")
    assert code == 2 and "within the retention (3 months" in err and err.count("\n") == 1
    code, said, err = _archive(env, "--out", str(out), "--month", "2025-01")
    assert code == 0, err
    assert said.startswith(f"archived {JANUARY}: 320 lines of 2 tables")
    data = next(out.glob("*.lines.gz"))
    manifest_file = next(out.glob("*.manifest.json"))
    manifest = json.loads(manifest_file.read_text())
    assert manifest["file_sha256"] == hashlib.sha256(data.read_bytes()).hexdigest()
    spans = {s["table"]: s for s in manifest["tables"]}
    assert (spans["T01"]["first_seq"], spans["T01"]["last_seq"], spans["T01"]["lines"]) == (
        1,
        120,
        120,
    )
    assert spans["T01"]["first_prev"] == GENESIS and spans["T01"]["holes"] == []
    assert spans["T01"]["last_hash"] == hashlib.sha256(lines["T01"][119]).hexdigest()
    assert gzip.decompress(data.read_bytes()) == b"".join(lines["T01"][:120] + lines["T02"])
    # The month is gone from the database (its partition empty), February's lines stay.
    assert _january(env) == 0
    assert env.psql("SELECT min(seq), count(*) FROM journal_lines WHERE table_id = 'T01'")[0] == (
        121,
        180,
    )
    events = env.get(floor, "/api/tables/T02/events", role="audit", limit=1000)
    assert events == []
    listed = {m["month"]: m for m in map(json.loads, _archive(env, "--list")[1].splitlines())}
    assert listed["2025-01"]["file"] == data.name and listed["2025-01"]["past_retention"]
    assert listed["2025-02"]["file"] is None and listed["2025-01"]["restored_at"] is None
    code, said, err = _archive(env, "--verify", str(manifest_file))
    assert code == 0 and said.startswith(f"verified {data.name}: 320 lines of 2 tables"), err

    # A byte of the file changed: refused, nothing restored.
    bad = _copy([data, manifest_file], tmp_path / "byte")
    raw = bytearray(bad[0].read_bytes())
    raw[len(raw) // 2] ^= 0x01
    bad[0].write_bytes(bytes(raw))
    code, said, err = _archive(env, "--restore", str(bad[1]))
    assert code == 2 and said == "" and err.count("\n") == 1, err
    assert "refused:" in err and "SHA-256" in err and "nothing was restored" in err
    # The file's lines edited and the manifest's SHA-256 made to agree with it: the lines no
    # longer chain as the manifest says.
    edited = _copy([data, manifest_file], tmp_path / "edited")
    text = gzip.decompress(edited[0].read_bytes()).replace(b'"amount":100', b'"amount":900', 1)
    edited[0].write_bytes(gzip.compress(text))
    forged = json.loads(edited[1].read_text())
    forged["file_sha256"] = hashlib.sha256(edited[0].read_bytes()).hexdigest()
    forged["file_bytes"] = edited[0].stat().st_size
    edited[1].write_text(json.dumps(forged))
    code, _, err = _archive(env, "--restore", str(edited[1]))
    assert code == 2 and "tables that differ: T02" in err and err.count("\n") == 1, err
    # The manifest edited so that it still agrees with the file: not the manifest recorded.
    renamed = _copy([data, manifest_file], tmp_path / "renamed")
    forged = json.loads(renamed[1].read_text())
    forged["archived_by"] = "someone.else"
    renamed[1].write_text(json.dumps(forged, indent=1) + "\n")
    code, said, err = _archive(env, "--verify", str(renamed[1]))
    assert code == 0, err  # on its own it holds together
    code, _, err = _archive(env, "--restore", str(renamed[1]))
    assert code == 2 and "not the one recorded at archiving" in err, err
    assert _january(env) == 0
    assert env.psql("SELECT restored_at FROM floor_archives WHERE partition = %s", JANUARY) == [
        (None,)
    ]
    refusals = env.psql("SELECT count(*) FROM floor_actions WHERE action = 'restore' "
                        "AND outcome LIKE 'refused:%%'")  # fmt: skip
    assert refusals == [(3,)]

    # The archive as written: restored, verified, served again.
    code, said, err = _archive(env, "--restore", str(data))
    assert code == 0, err
    assert said.startswith(f"restored {JANUARY}: 320 lines of 2 tables") and "verified" in said
    for table, ls in lines.items():
        _chain_ok(env, table, ls)
    events = env.get(floor, "/api/tables/T02/events", role="audit", limit=1000)
    assert [e["seq"] for e in events] == list(range(200, 0, -1))
    tables = {t["table"]: t for t in env.get(floor, "/api/tables", role="audit")}
    assert tables["T01"]["chain"] == "ok" and tables["T02"]["chain"] == "ok"
    # Restored once: a second restore is refused; archiving it again is allowed.
    code, _, err = _archive(env, "--restore", str(manifest_file))
    assert code == 2 and "restored already" in err
    assert floor.stop() == 0
