"""What the floor's admin commands share: who runs them, the two-admin rule, their audit rows, and
their command line (`tabled floor enrol`, `tables`, `broker-key`, `broker-config`).

- **Who**: the person whose floor token (`$TABLED_TOKEN` or `--token-file`) the floor's tokens
  file names, with their role; only `admin` changes the registry.
- **Audit**: every attempt, done, asked, refused or expired, is a row of `floor_actions`.
- **Two admins** for what replaces a table's identity: a table's journal key (re-enrolment,
  `enrol_requests`) and its broker key (`broker_key_requests`). The first admin's run records a
  request; a second, other admin running the same command within `REQUEST_HOURS` completes it.
  A request older than that is void: any admin command of the floor deletes it first and records
  it in `floor_actions` as `expired` (actor `floor`, the asker named in the note), so a late
  confirmation becomes a new request, never a completion.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import psycopg

from daemon.api.tokens import FLOOR_ROLES, Principal, TokenFileError, TokenStore
from daemon.config import ConfigError
from daemon.floor.config import FloorConfig, load_floor_config
from daemon.floor.store import Store

T = TypeVar("T")
# A two-admin request not completed within this many hours is void (docs/floor.md).
REQUEST_HOURS = 24


class Refused(ValueError):
    """A floor admin's command the floor refuses; the message says why."""


async def record(  # noqa: PLR0917 - one audit row's columns, in their order
    conn: psycopg.AsyncConnection[Any], who: Principal, action: str, table: str, outcome: str,
    note: str,
) -> None:  # fmt: skip
    """One row of `floor_actions`."""
    await conn.execute(
        "INSERT INTO floor_actions (actor, role, action, target, outcome, note) "
        "VALUES (%s, %s, %s, %s, %s, %s)",
        (who.actor, who.role, action, table[:200], outcome, note),
    )


@dataclass(frozen=True)
class TwoAdmins:
    """A change that takes two floor admins: its action in `floor_actions`, the SQL table of its
    pending requests, the column naming what is asked for, and the audit note made from it."""

    action: str
    requests: str
    column: str
    note: str  # an SQL expression over the request's row


REENROL = TwoAdmins("re-enrol", "enrol_requests", "public_key", "'key ' || fingerprint")
BROKER_KEY = TwoAdmins("broker-key", "broker_key_requests", "nkey", "'nkey ' || left(nkey, 12)")


async def expire_requests(conn: psycopg.AsyncConnection[Any]) -> int:
    """Delete the requests older than `REQUEST_HOURS`, each recorded as expired; how many."""
    expired = 0
    for kind in (REENROL, BROKER_KEY):
        cur = await conn.execute(
            f"DELETE FROM {kind.requests} "  # noqa: S608 - constant names, not input
            "WHERE requested_at < now() - make_interval(hours => %s) "
            f"RETURNING table_id, requested_by, requested_at, {kind.note}",
            (REQUEST_HOURS,),
        )
        for table, asker, asked_at, note in await cur.fetchall():
            await record(
                conn, Principal("floor", "floor"), kind.action, table,
                f"expired: asked by {asker} at {asked_at:%Y-%m-%d %H:%M:%S %Z}, not confirmed "
                f"within {REQUEST_HOURS} h", note,
            )  # fmt: skip
            expired += 1
    return expired


async def second_admin(  # noqa: PLR0917 - the request's parts, in their order
    conn: psycopg.AsyncConnection[Any], kind: TwoAdmins, who: Principal, table: str, value: str,
    note: str, ask: tuple[str, tuple[Any, ...]],
) -> str | Refused | None:  # fmt: skip
    """The two-admin step of `kind` for `value` on `table`, by `who` (an admin): None when this
    is the first ask (`ask`, the request's INSERT, is run and the ask recorded); the first
    admin's name when `who` is another admin completing it (the table's requests of this kind
    are used up; the caller makes the change and records it); Refused, recorded, when `who`
    asked already."""
    await expire_requests(conn)
    cur = await conn.execute(
        f"SELECT requested_by FROM {kind.requests} "  # noqa: S608 - constant names
        f"WHERE table_id = %s AND {kind.column} = %s",
        (table, value),
    )
    row = await cur.fetchone()
    if row is None:
        await conn.execute(*ask)
        await record(conn, who, kind.action, table, "requested: a second admin must confirm", note)
        return None
    first = str(row[0])
    if first == who.actor:
        await record(conn, who, kind.action, table, "refused: the same admin twice", note)
        return Refused(
            f"{who.actor} asked for this already; a second, other floor admin must confirm it "
            f"(within {REQUEST_HOURS} h of the ask)"
        )
    await conn.execute(
        f"DELETE FROM {kind.requests} WHERE table_id = %s",  # noqa: S608 - constant name
        (table,),
    )
    return first


def principal(tokens_file: Path | None, token_file: Path | None) -> Principal:
    """Who runs the command: the holder of the token in `token_file` or `$TABLED_TOKEN`, as the
    floor's tokens file names them; Refused, in words, otherwise."""
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


def parser(prog: str, description: str, config: str) -> argparse.ArgumentParser:
    """A floor command's parser, with its `--config` (what of the floor config it uses)."""
    made = argparse.ArgumentParser(prog=prog, description=description)
    made.add_argument("--config", help=f"floor config ({config})")
    return made


def admin_parser(prog: str, description: str, key: str, key_help: str) -> argparse.ArgumentParser:
    """An admin command's parser: the table, its `key` (a required option), the floor config,
    the token's file."""
    made = parser(
        prog, f"{description}: the token is read from $TABLED_TOKEN or --token-file.",
        "its database and tokens file",
    )  # fmt: skip
    made.add_argument("table", help="the table's id, as in its [table] id")
    made.add_argument(key, required=True, help=key_help)
    made.add_argument("--token-file", type=Path, help="read the token here (else $TABLED_TOKEN)")
    return made


def load(prog: str, path: str | None) -> FloorConfig:
    """The floor config, or SystemExit(2) with the one line that says why not."""
    try:
        return load_floor_config(path)
    except ConfigError as exc:
        raise SystemExit(fail(prog, str(exc), 2)) from None


def fail(prog: str, message: str, status: int) -> int:
    print(f"{prog}: {message}", file=sys.stderr)
    return status


async def on_store(config: FloorConfig, work: Callable[[Store], Awaitable[T]]) -> T:
    """`work` on the floor's database, migrated first, closed after."""
    store = Store(config.floor.database, config.floor.subject_prefix)
    try:
        await store.migrate()
        return await work(store)
    finally:
        await store.close()


def run_admin(prog: str, config: FloorConfig, work: Callable[[Store], Awaitable[str]]) -> int:
    """Run an admin command's `work`: its message printed (0); refused (3) or a database error
    (1) in one line."""

    async def run() -> int:
        try:
            if message := await on_store(config, work):
                print(message)
        except Refused as exc:
            return fail(prog, str(exc), 3)
        except psycopg.Error as exc:
            return fail(prog, f"database: {str(exc).strip()}", 1)
        return 0

    return asyncio.run(run())
