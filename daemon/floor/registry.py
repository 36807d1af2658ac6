"""The floor's registry of tables: which tables it takes lines from, and their keys.

`tabled floor enrol TABLE --key PUB [--game G] [--pit P] --config floor.toml` is run by a floor
admin (their floor token, from `$TABLED_TOKEN` or `--token-file`, must hold the `admin` role in
the floor's tokens file). Every attempt, done or refused, is a row of `floor_actions`, the
floor's audit table, with the key's fingerprint.

- A table not enrolled: enrolled with that key (from seq 1).
- Enrolled with that key already: nothing to do.
- Enrolled with another key (the key was lost, or the table PC replaced): a **re-enrolment**,
  which takes two floor admins. The first one's run is recorded as a request; a second, other
  admin running the same command completes it: the old keys are revoked (no head they sign is
  taken from then on) and the new key proves lines after the last line the floor holds proven.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from daemon.api.tokens import FLOOR_ROLES, Principal, TokenFileError, TokenStore
from daemon.config import ConfigError
from daemon.floor.config import load_floor_config
from daemon.floor.store import Store
from daemon.journal.provenance import fingerprint, parse_public

TABLE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Enrolment:
    outcome: str  # enrolled | unchanged | requested | re-enrolled
    message: str


class Refused(ValueError):
    """An enrolment the floor refuses; the message says why."""


async def _action(  # noqa: PLR0917 - one audit row's columns, in their order
    conn: psycopg.AsyncConnection[Any], who: Principal, action: str, table: str, outcome: str,
    note: str,
) -> None:  # fmt: skip
    await conn.execute(
        "INSERT INTO floor_actions (actor, role, action, target, outcome, note) "
        "VALUES (%s, %s, %s, %s, %s, %s)",
        (who.actor, who.role, action, table, outcome, note),
    )


async def enrol(
    store: Store,
    who: Principal,
    table: str,
    public: str,
    *,
    game: str | None = None,
    pit: str | None = None,
) -> Enrolment:
    """Enrol `table` with `public` as `who` (see the module's text); Refused, recorded, if not."""
    parse_public(public)  # ValueError for the caller, before anything is recorded
    public = public.strip()
    print_ = fingerprint(public)
    note = f"key {print_}"
    conn = await store.writer()
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext('enrol:' || %s))", (table,))
        if who.role != "admin":
            await _action(conn, who, "enrol", table, f"refused: role {who.role}", note)
            outcome: Enrolment | Refused = Refused(
                f"{who.actor} is {who.role}; enrolling a table takes a floor admin"
            )
        elif not TABLE_ID.match(table):
            await _action(conn, who, "enrol", table[:200], "refused: not a table id", note)
            outcome = Refused(f"{table!r} is not a table id (1-64 letters, digits, _ and -)")
        else:
            outcome = await _enrol_tx(conn, who, table, public, print_, game, pit)
    if isinstance(outcome, Refused):
        raise outcome
    return outcome


async def _enrol_tx(  # noqa: PLR0917 - enrol's arguments, passed on
    conn: psycopg.AsyncConnection[Any], who: Principal, table: str, public: str, print_: str,
    game: str | None, pit: str | None,
) -> Enrolment | Refused:  # fmt: skip
    note = f"key {print_}"
    cur = await conn.execute(
        "SELECT public_key, status FROM table_keys WHERE table_id = %s", (table,)
    )
    keys = {row[0]: row[1] for row in await cur.fetchall()}
    if not keys:
        await conn.execute(
            "INSERT INTO enrolled_tables (table_id, game, pit, enrolled_by) "
            "VALUES (%s, %s, %s, %s)",
            (table, game, pit, who.actor),
        )
        await conn.execute(
            "INSERT INTO table_keys (table_id, public_key, fingerprint, status, via, added_by) "
            "VALUES (%s, %s, %s, 'active', 'enrol', %s)",
            (table, public, print_, who.actor),
        )
        await _action(conn, who, "enrol", table, "done", note)
        return Enrolment("enrolled", f"{table} enrolled with key {print_} by {who.actor}")
    if keys.get(public) == "active":
        await _action(conn, who, "enrol", table, "done: already enrolled with this key", note)
        return Enrolment("unchanged", f"{table} is already enrolled with key {print_}")
    if public in keys:
        await _action(conn, who, "re-enrol", table, f"refused: key {keys[public]}", note)
        return Refused(f"key {print_} was {keys[public]} for {table}; a table needs a new key")
    cur = await conn.execute(
        "SELECT requested_by FROM enrol_requests WHERE table_id = %s AND public_key = %s",
        (table, public),
    )
    row = await cur.fetchone()
    if row is None:
        await conn.execute(
            "INSERT INTO enrol_requests (table_id, public_key, fingerprint, game, pit, "
            "requested_by) VALUES (%s, %s, %s, %s, %s, %s)",
            (table, public, print_, game, pit, who.actor),
        )
        await _action(conn, who, "re-enrol", table, "requested: a second admin must confirm", note)
        return Enrolment(
            "requested",
            f"{table} is enrolled with another key: re-enrolling it with key {print_} takes a "
            f"second floor admin, who runs the same command (asked by {who.actor})",
        )
    first = str(row[0])
    if first == who.actor:
        await _action(conn, who, "re-enrol", table, "refused: the same admin twice", note)
        return Refused(
            f"{who.actor} asked for this re-enrolment already; a second, other floor admin "
            "must confirm it"
        )
    cur = await conn.execute("SELECT last_seq FROM floor_tables WHERE table_id = %s", (table,))
    proven = await cur.fetchone()
    after = int(proven[0]) if proven else 0
    await conn.execute(
        "UPDATE table_keys SET status = 'revoked', until_seq = coalesce(least(until_seq, %s), %s) "
        "WHERE table_id = %s AND status <> 'revoked'",
        (after, after, table),
    )
    await conn.execute(
        "INSERT INTO table_keys (table_id, public_key, fingerprint, from_seq, status, via, "
        "added_by, approved_by) VALUES (%s, %s, %s, %s, 'active', 're-enrol', %s, %s)",
        (table, public, print_, after + 1, first, who.actor),
    )
    await conn.execute(
        "UPDATE enrolled_tables SET game = coalesce(%s, game), pit = coalesce(%s, pit) "
        "WHERE table_id = %s",
        (game, pit, table),
    )
    await conn.execute("DELETE FROM enrol_requests WHERE table_id = %s", (table,))
    await _action(conn, who, "re-enrol", table, f"done: asked by {first}", note)
    return Enrolment(
        "re-enrolled",
        f"{table} re-enrolled with key {print_} (asked by {first}, confirmed by {who.actor}); "
        f"its old keys are revoked, the new one proves lines from seq {after + 1}",
    )


async def enrolled(store: Store) -> list[dict[str, Any]]:
    """The registry: each enrolled table with its game, pit, who enrolled it and when, and its
    keys (public key, fingerprint, seqs, status)."""
    rows = await store.query(
        "SELECT e.table_id AS table, e.game, e.pit, e.enrolled_by, e.enrolled_at, "
        "coalesce((SELECT json_agg(json_build_object('public_key', k.public_key, "
        "'fingerprint', k.fingerprint, 'from_seq', k.from_seq, 'until_seq', k.until_seq, "
        "'status', k.status, 'via', k.via, 'added_by', k.added_by, 'approved_by', "
        "k.approved_by, 'added_at', k.added_at) ORDER BY k.id) FROM table_keys k "
        "WHERE k.table_id = e.table_id), '[]') AS keys FROM enrolled_tables e "
        "ORDER BY e.table_id"
    )
    return rows


def _principal(tokens_file: Path | None, token_file: Path | None) -> Principal:
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise Refused(f"--token-file {token_file}: {exc.strerror}") from None
    else:
        token = os.environ.get("TABLED_TOKEN", "").strip()
    if not token:
        raise Refused("no token: set $TABLED_TOKEN or --token-file to a floor admin's token")
    if tokens_file is None:
        raise Refused("the floor config names no [api] tokens_file to check the token against")
    store = TokenStore(tokens_file, FLOOR_ROLES)
    try:
        who = store.lookup(token)
    except TokenFileError as exc:
        raise Refused(str(exc)) from None
    if who is None:
        raise Refused(f"the token is not one of {tokens_file}'s floor tokens")
    return who


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tabled floor enrol",
        description="Enrol a table on the floor with its public key (as `tabled keys show` "
        "prints it), as a floor admin: the token is read from $TABLED_TOKEN or --token-file. "
        "A table enrolled with another key needs two admins (re-enrolment).",
    )
    parser.add_argument("table", help="the table's id, as in its [table] id")
    parser.add_argument("--key", required=True, help="the table's public key: ed25519:...")
    parser.add_argument("--game", help="the table's game (shown on the floor)")
    parser.add_argument("--pit", help="the table's pit (shown on the floor)")
    parser.add_argument("--config", help="floor config (its database and tokens file)")
    parser.add_argument("--token-file", type=Path, help="read the token here (else $TABLED_TOKEN)")
    args = parser.parse_args(argv)
    try:
        config = load_floor_config(args.config)
        parse_public(args.key)
        who = _principal(config.api.tokens_file, args.token_file)
    except (ConfigError, ValueError) as exc:
        print(f"tabled floor enrol: {exc}", file=sys.stderr)
        return 2

    async def run() -> int:
        store = Store(config.floor.database, config.floor.subject_prefix)
        try:
            await store.migrate()
            done = await enrol(store, who, args.table, args.key, game=args.game, pit=args.pit)
        except Refused as exc:
            print(f"tabled floor enrol: {exc}", file=sys.stderr)
            return 3
        except psycopg.Error as exc:
            print(f"tabled floor enrol: database: {str(exc).strip()}", file=sys.stderr)
            return 1
        finally:
            await store.close()
        print(done.message)
        return 0

    return asyncio.run(run())


def list_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tabled floor tables",
        description="The floor's registry: each enrolled table, who enrolled it, its keys.",
    )
    parser.add_argument("--config", help="floor config (its database)")
    args = parser.parse_args(argv)
    try:
        config = load_floor_config(args.config)
    except ConfigError as exc:
        print(f"tabled floor tables: {exc}", file=sys.stderr)
        return 2

    async def run() -> int:
        from daemon.floor.store import dumps  # noqa: PLC0415

        store = Store(config.floor.database, config.floor.subject_prefix)
        try:
            await store.migrate()
            rows = await enrolled(store)
        except psycopg.Error as exc:
            print(f"tabled floor tables: database: {str(exc).strip()}", file=sys.stderr)
            return 1
        finally:
            await store.close()
        for row in rows:
            print(dumps(row))
        return 0

    return asyncio.run(run())
