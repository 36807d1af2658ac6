"""The floor's registry of tables: which tables it takes lines from, and their keys.

`tabled floor enrol TABLE --key PUB [--game G] [--pit P] --config floor.toml` is run by a floor
admin (their floor token, from `$TABLED_TOKEN` or `--token-file`, must hold the `admin` role in
the floor's tokens file). Every attempt, done or refused, is a row of `floor_actions`, the
floor's audit table, with the key's fingerprint.

- A table not enrolled: enrolled with that key (from seq 1).
- Enrolled with that key already: nothing to do.
- Enrolled with another key (the key was lost, or the table PC replaced): a **re-enrolment**,
  which takes two floor admins (daemon/floor/admin.py: the first one's run is recorded as a
  request; a second, other admin running the same command within 24 hours completes it): the old
  keys are revoked (no head they sign is taken from then on) and the new key proves lines after
  the last line the floor holds proven.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from daemon.api.tokens import Principal
from daemon.floor.admin import (
    REENROL,
    REQUEST_HOURS,
    Refused,
    admin_parser,
    fail,
    load,
    principal,
    record,
    run_admin,
    second_admin,
)
from daemon.floor.admin import parser as floor_parser
from daemon.floor.store import Store, dumps
from daemon.journal.provenance import fingerprint, parse_public

TABLE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Enrolment:
    outcome: str  # enrolled | unchanged | requested | re-enrolled
    message: str


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
            await record(conn, who, "enrol", table, f"refused: role {who.role}", note)
            outcome: Enrolment | Refused = Refused(
                f"{who.actor} is {who.role}; enrolling a table takes a floor admin"
            )
        elif not TABLE_ID.match(table):
            await record(conn, who, "enrol", table, "refused: not a table id", note)
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
        await record(conn, who, "enrol", table, "done", note)
        return Enrolment("enrolled", f"{table} enrolled with key {print_} by {who.actor}")
    if keys.get(public) == "active":
        await record(conn, who, "enrol", table, "done: already enrolled with this key", note)
        return Enrolment("unchanged", f"{table} is already enrolled with key {print_}")
    if public in keys:
        await record(conn, who, "re-enrol", table, f"refused: key {keys[public]}", note)
        return Refused(f"key {print_} was {keys[public]} for {table}; a table needs a new key")
    ask = (
        "INSERT INTO enrol_requests (table_id, public_key, fingerprint, game, pit, requested_by) "
        "VALUES (%s, %s, %s, %s, %s, %s)",
        (table, public, print_, game, pit, who.actor),
    )
    first = await second_admin(conn, REENROL, who, table, public, note, ask)
    if first is None:
        return Enrolment(
            "requested",
            f"{table} is enrolled with another key: re-enrolling it with key {print_} takes a "
            f"second floor admin, who runs the same command within {REQUEST_HOURS} hours (asked "
            f"by {who.actor})",
        )
    if isinstance(first, Refused):
        return first
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
    await record(conn, who, "re-enrol", table, f"done: asked by {first}", note)
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


def main(argv: Sequence[str]) -> int:
    prog = "tabled floor enrol"
    parser = admin_parser(
        prog, "Enrol a table on the floor with its public key (as `tabled keys show` prints it), "
        "as a floor admin (one enrolled with another key takes two: a re-enrolment)",
        "--key", "the table's public key: ed25519:...",
    )  # fmt: skip
    parser.add_argument("--game", help="the table's game (shown on the floor)")
    parser.add_argument("--pit", help="the table's pit (shown on the floor)")
    args = parser.parse_args(argv)
    config = load(prog, args.config)
    try:
        parse_public(args.key)
        who = principal(config.api.tokens_file, args.token_file)
    except ValueError as exc:
        return fail(prog, str(exc), 2)

    async def work(store: Store) -> str:
        done = await enrol(store, who, args.table, args.key, game=args.game, pit=args.pit)
        return done.message

    return run_admin(prog, config, work)


def list_main(argv: Sequence[str]) -> int:
    prog = "tabled floor tables"
    parser = floor_parser(
        prog, "The floor's registry: each enrolled table, who enrolled it, its keys.",
        "its database",
    )  # fmt: skip
    args = parser.parse_args(argv)
    config = load(prog, args.config)

    async def work(store: Store) -> str:
        return "\n".join(dumps(row) for row in await enrolled(store))

    return run_admin(prog, config, work)
