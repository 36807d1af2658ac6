"""The broker's identities, kept by the floor, and the broker config written from them.

    tabled floor nkey          --config floor.toml    # the floor's own nkey ([floor] creds)
    tabled floor broker-key    TABLE --nkey U... --config floor.toml   # a floor admin
    tabled floor broker-config --config floor.toml [--out FILE] [--tls-cert F --tls-key F
                               [--tls-ca F [--verify]]]

A table signs in to the broker with an nkey of its own (`tabled feed nkey` on the table makes it
and prints its public key). A floor admin records that public key beside the table's enrolment
(`broker-key`, audited in `floor_actions`); replacing a table's broker key takes two floor admins,
like a re-enrolment (daemon/floor/admin.py: the first asks, a second, other admin confirms
within 24 hours; whoever holds a replaced key could otherwise write as that table);
`broker-config` writes the
nats-server accounts for every enrolled table that has one, and the floor's user, from the
registry (daemon/floor/brokerconf.py says what each may do). An enrolled table without a broker
key is left out (it cannot connect) and named. The file is written whole (a temporary file, then
a rename), mode 0600; nats-server includes it, and a reload (`nats-server --signal reload`)
takes a new one.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg

from daemon.api.tokens import Principal
from daemon.floor.admin import (
    BROKER_KEY,
    REQUEST_HOURS,
    Refused,
    admin_parser,
    fail,
    load,
    on_store,
    principal,
    record,
    run_admin,
    second_admin,
)
from daemon.floor.admin import parser as floor_parser
from daemon.floor.brokerconf import (
    BrokerConfigError,
    Identity,
    ServerTls,
    TableAccess,
    broker_config,
)
from daemon.floor.config import FloorSection
from daemon.floor.store import Store
from daemon.shipper.broker import JWT_MARK
from daemon.shipper.nkey import NkeyError, make_seed, read_public_key


async def set_broker_key(store: Store, who: Principal, table: str, nkey: str) -> str:
    """Record `nkey` as `table`'s broker identity, as `who` (a floor admin; a second one to
    replace a key); Refused if not. Every attempt is a `floor_actions` row."""
    note = f"nkey {nkey[:12]}"
    conn = await store.writer()
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext('broker-key:' || %s))", (table,))
        outcome = await _set_key_tx(conn, who, table, nkey, note)
    if isinstance(outcome, Refused):
        raise outcome
    return outcome


async def _set_key_tx(
    conn: psycopg.AsyncConnection[Any], who: Principal, table: str, nkey: str, note: str
) -> str | Refused:
    cur = await conn.execute(
        "SELECT (SELECT nkey FROM broker_keys WHERE table_id = %s), "
        "EXISTS (SELECT 1 FROM enrolled_tables WHERE table_id = %s), "
        "(SELECT table_id FROM broker_keys WHERE nkey = %s)",
        (table, table, nkey),
    )
    row = await cur.fetchone()
    old, known, holder = (row[0], row[1], row[2]) if row else (None, False, None)
    refused: tuple[str, str] | None = None
    if who.role != "admin":
        refused = (f"role {who.role}", f"{who.actor} is {who.role}; a table's broker key takes a "
                   "floor admin")  # fmt: skip
    elif not known:
        refused = ("not enrolled", f"{table} is not enrolled: `tabled floor enrol {table}` first")
    elif holder is not None and holder != table:
        refused = (f"{holder}'s key", f"that nkey is {holder}'s broker key; each table has its own")
    if refused is not None:
        await record(conn, who, "broker-key", table, f"refused: {refused[0]}", note)
        return Refused(refused[1])
    if old == nkey:
        await record(conn, who, "broker-key", table, "done: unchanged", note)
        return f"{table}'s broker key is already {nkey}"
    if old is None:
        await _store_key(conn, table, nkey, who.actor)
        await record(conn, who, "broker-key", table, "done", note)
        return f"{table}'s broker key is {nkey}; now `tabled floor broker-config`"
    ask = (
        "INSERT INTO broker_key_requests (table_id, nkey, requested_by) VALUES (%s, %s, %s)",
        (table, nkey, who.actor),
    )
    first = await second_admin(conn, BROKER_KEY, who, table, nkey, note, ask)
    if first is None:
        return (
            f"{table} has the broker key {old}: replacing it with {nkey} takes a second floor "
            f"admin, who runs the same command within {REQUEST_HOURS} hours (asked by "
            f"{who.actor})"
        )
    if isinstance(first, Refused):
        return first
    await _store_key(conn, table, nkey, f"{first}+{who.actor}")
    await record(conn, who, "broker-key", table, f"done: asked by {first}, replaced {old[:12]}",
                 note)  # fmt: skip
    return (
        f"{table}'s broker key is {nkey}, replacing {old} (asked by {first}, confirmed by "
        f"{who.actor}); now `tabled floor broker-config`"
    )


async def _store_key(conn: psycopg.AsyncConnection[Any], table: str, nkey: str, by: str) -> None:
    await conn.execute(
        "INSERT INTO broker_keys (table_id, nkey, added_by) VALUES (%s, %s, %s) "
        "ON CONFLICT (table_id) DO UPDATE SET nkey = excluded.nkey, "
        "added_by = excluded.added_by, added_at = now()",
        (table, nkey, by),
    )


async def broker_tables(store: Store) -> tuple[list[TableAccess], list[str]]:
    """The enrolled tables with a broker key, and those without one."""
    rows = await store.query(
        "SELECT e.table_id, b.nkey FROM enrolled_tables e "
        "LEFT JOIN broker_keys b ON b.table_id = e.table_id ORDER BY e.table_id"
    )
    tables = [TableAccess(r["table_id"], Identity(nkey=r["nkey"])) for r in rows if r["nkey"]]
    return tables, [r["table_id"] for r in rows if not r["nkey"]]


def floor_identity(floor: FloorSection) -> Identity:
    """The floor's user in the broker's config, from its own `[floor]` keys."""
    if floor.creds is not None:
        try:
            head = floor.creds.read_text(encoding="ascii", errors="replace")
        except OSError as exc:
            raise BrokerConfigError(f"floor.creds: {floor.creds}: {exc.strerror or exc}") from None
        if JWT_MARK in head:
            raise BrokerConfigError(
                "floor.creds is a .creds file (an operator-mode broker): its accounts come from "
                "the operator's tools (nsc), not from this command"
            )
        try:
            return Identity(nkey=read_public_key(floor.creds, "floor.creds"))
        except NkeyError as exc:
            raise BrokerConfigError(str(exc)) from None
    if floor.user is not None:
        return Identity(user=floor.user, password=floor.password)
    raise BrokerConfigError(
        "[floor] has no broker identity: set creds (`tabled floor nkey` makes the seed) or "
        "user and password"
    )


def write_private(path: Path, text: str) -> None:
    """Write `path` whole (a temporary file beside it, then a rename), mode 0600."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def nkey_main(argv: Sequence[str]) -> int:
    prog = "tabled floor nkey"
    parser = floor_parser(
        prog, "Make the floor's broker nkey seed at [floor] creds (mode 0600) if there is none; "
        "print its public key on the last line.", "its [floor] creds",
    )  # fmt: skip
    args = parser.parse_args(argv)
    config = load(prog, args.config)
    if config.floor.creds is None:
        return fail(prog, 'set [floor] creds to the file for the floor\'s seed ("floor.nk")', 2)
    try:
        public, made = make_seed(config.floor.creds, "floor.creds")
    except NkeyError as exc:
        return fail(prog, str(exc), 2)
    print(f"floor: nkey seed {config.floor.creds} ({'made' if made else 'already there'})")
    print(public)
    return 0


def key_main(argv: Sequence[str]) -> int:
    prog = "tabled floor broker-key"
    args = admin_parser(
        prog, "Record an enrolled table's broker key (the nkey `tabled feed nkey` prints on the "
        "table), as a floor admin (replacing one takes two)",
        "--nkey", "the table's nkey public key: U...",
    ).parse_args(argv)  # fmt: skip
    config = load(prog, args.config)
    try:
        Identity(nkey=args.nkey).check(f"table {args.table}")
        who = principal(config.api.tokens_file, args.token_file)
    except (BrokerConfigError, Refused) as exc:
        return fail(prog, str(exc), 2)
    return run_admin(prog, config, lambda store: set_broker_key(store, who, args.table, args.nkey))


def config_main(argv: Sequence[str]) -> int:
    prog = "tabled floor broker-config"
    parser = floor_parser(
        prog, "Write nats-server's accounts for the enrolled tables and the floor, each allowed "
        "only its own (docs/floor.md, 'The broker'), and the server's TLS if given.",
        "its database, stream, [floor] identity",
    )  # fmt: skip
    parser.add_argument("--out", type=Path, help="write here, mode 0600 (default: stdout)")
    parser.add_argument("--tls-cert", type=Path, help="the server's certificate (PEM)")
    parser.add_argument("--tls-key", type=Path, help="the server's key (PEM)")
    parser.add_argument("--tls-ca", type=Path, help="the CA of client certificates (PEM)")
    parser.add_argument(
        "--verify", action="store_true", help="require a client certificate from that CA"
    )
    args = parser.parse_args(argv)
    config = load(prog, args.config)
    tls = None
    if (args.tls_cert is None) != (args.tls_key is None):
        return fail(prog, "--tls-cert and --tls-key go together", 2)
    if args.tls_cert is not None:
        tls = ServerTls(args.tls_cert.resolve(), args.tls_key.resolve(),
                        args.tls_ca.resolve() if args.tls_ca else None, args.verify)  # fmt: skip
    elif args.tls_ca is not None or args.verify:
        return fail(prog, "--tls-ca and --verify go with --tls-cert and --tls-key", 2)
    try:
        floor = floor_identity(config.floor)
    except BrokerConfigError as exc:
        return fail(prog, str(exc), 2)

    try:
        tables, missing = asyncio.run(on_store(config, broker_tables))
        section = config.floor
        text = broker_config(
            tables, floor, stream=section.stream, prefix=section.subject_prefix,
            durable=section.durable, tls=tls,
        )  # fmt: skip
    except psycopg.Error as exc:
        return fail(prog, f"database: {str(exc).strip()}", 1)
    except BrokerConfigError as exc:
        return fail(prog, str(exc), 2)
    if missing:
        text += "# Enrolled without a broker key (cannot connect): " + ", ".join(missing) + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        try:
            write_private(args.out, text)
        except OSError as exc:
            return fail(prog, f"--out {args.out}: {exc.strerror or exc}", 1)
    summary = f"{len(tables)} table(s) and the floor"
    if missing:
        summary += (
            f"; without a broker key, left out: {', '.join(missing)} "
            "(`tabled floor broker-key TABLE --nkey U...`)"
        )
    print(f"{prog}: {summary}" + (f"; written to {args.out}" if args.out else ""), file=sys.stderr)
    return 0
