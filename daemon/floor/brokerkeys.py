"""The broker's identities, kept by the floor, and the broker config written from them.

    tabled floor nkey          --config floor.toml    # the floor's own nkey ([floor] creds)
    tabled floor broker-key    TABLE --nkey U... --config floor.toml   # a floor admin
    tabled floor broker-config --config floor.toml [--out FILE] [--tls-cert F --tls-key F
                               [--tls-ca F [--verify]]]

A table signs in to the broker with an nkey of its own (`tabled feed nkey` on the table makes it
and prints its public key). A floor admin records that public key beside the table's enrolment
(`broker-key`, audited in `floor_actions` with the old and new key); `broker-config` writes the
nats-server accounts for every enrolled table that has one, and the floor's user, from the
registry (daemon/floor/brokerconf.py says what each may do). An enrolled table without a broker
key is left out (it cannot connect) and named. The file is written whole (a temporary file, then
a rename), mode 0600; nats-server includes it, and a reload (`nats-server --signal reload`)
takes a new one.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import psycopg

from daemon.api.tokens import Principal
from daemon.config import ConfigError
from daemon.floor.brokerconf import (
    BrokerConfigError,
    Identity,
    ServerTls,
    TableAccess,
    broker_config,
)
from daemon.floor.config import FloorConfig, FloorSection, load_floor_config
from daemon.floor.registry import Refused, _principal
from daemon.floor.store import Store
from daemon.shipper.broker import JWT_MARK
from daemon.shipper.nkey import NkeyError, make_seed, read_public_key


async def set_broker_key(store: Store, who: Principal, table: str, nkey: str) -> str:
    """Record `nkey` as `table`'s broker identity, as `who` (a floor admin); Refused if not.
    Every attempt is a `floor_actions` row."""
    note = f"nkey {nkey[:12]}"
    conn = await store.writer()
    async with conn.transaction():
        outcome: str | Refused
        cur = await conn.execute(
            "SELECT (SELECT nkey FROM broker_keys WHERE table_id = %s), "
            "EXISTS (SELECT 1 FROM enrolled_tables WHERE table_id = %s), "
            "(SELECT table_id FROM broker_keys WHERE nkey = %s)",
            (table, table, nkey),
        )
        row = await cur.fetchone()
        old, known, holder = (row[0], row[1], row[2]) if row else (None, False, None)
        if who.role != "admin":
            outcome = Refused(
                f"{who.actor} is {who.role}; a table's broker key takes a floor admin"
            )
            why = f"refused: role {who.role}"
        elif not known:
            outcome = Refused(f"{table} is not enrolled: `tabled floor enrol {table}` first")
            why = "refused: not enrolled"
        elif holder is not None and holder != table:
            outcome = Refused(f"that nkey is {holder}'s broker key; each table has its own")
            why = f"refused: {holder}'s key"
        elif old == nkey:
            outcome = f"{table}'s broker key is already {nkey}"
            why = "done: unchanged"
        else:
            await conn.execute(
                "INSERT INTO broker_keys (table_id, nkey, added_by) VALUES (%s, %s, %s) "
                "ON CONFLICT (table_id) DO UPDATE SET nkey = excluded.nkey, "
                "added_by = excluded.added_by, added_at = now()",
                (table, nkey, who.actor),
            )
            replaced = f" (replacing {old})" if old else ""
            outcome = f"{table}'s broker key is {nkey}{replaced}; now `tabled floor broker-config`"
            why = "done" + (f": replaced nkey {old[:12]}" if old else "")
        await conn.execute(
            "INSERT INTO floor_actions (actor, role, action, target, outcome, note) "
            "VALUES (%s, %s, 'broker-key', %s, %s, %s)",
            (who.actor, who.role, table[:200], why, note),
        )
    if isinstance(outcome, Refused):
        raise outcome
    return outcome


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


def _load(prog: str, path: str | None) -> FloorConfig:
    try:
        return load_floor_config(path)
    except ConfigError as exc:
        raise SystemExit(_fail(prog, str(exc), 2)) from None


def _fail(prog: str, message: str, status: int) -> int:
    print(f"{prog}: {message}", file=sys.stderr)
    return status


def nkey_main(argv: Sequence[str]) -> int:
    prog = "tabled floor nkey"
    parser = argparse.ArgumentParser(
        prog=prog, description="Make the floor's broker nkey seed at [floor] creds (mode 0600) "
        "if there is none; print its public key on the last line.",
    )  # fmt: skip
    parser.add_argument("--config", help="floor config")
    args = parser.parse_args(argv)
    config = _load(prog, args.config)
    if config.floor.creds is None:
        return _fail(prog, 'set [floor] creds to the file for the floor\'s seed ("floor.nk")', 2)
    try:
        public, made = make_seed(config.floor.creds, "floor.creds")
    except NkeyError as exc:
        return _fail(prog, str(exc), 2)
    print(f"floor: nkey seed {config.floor.creds} ({'made' if made else 'already there'})")
    print(public)
    return 0


def key_main(argv: Sequence[str]) -> int:
    prog = "tabled floor broker-key"
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Record an enrolled table's broker key (the nkey `tabled feed nkey` prints "
        "on the table), as a floor admin: the token is read from $TABLED_TOKEN or --token-file.",
    )
    parser.add_argument("table", help="the table's id")
    parser.add_argument("--nkey", required=True, help="the table's nkey public key: U...")
    parser.add_argument("--config", help="floor config (its database and tokens file)")
    parser.add_argument("--token-file", type=Path, help="read the token here (else $TABLED_TOKEN)")
    args = parser.parse_args(argv)
    config = _load(prog, args.config)
    try:
        Identity(nkey=args.nkey).check(f"table {args.table}")
        who = _principal(config.api.tokens_file, args.token_file)
    except (BrokerConfigError, Refused) as exc:
        return _fail(prog, str(exc), 2)

    async def run() -> int:
        store = Store(config.floor.database, config.floor.subject_prefix)
        try:
            await store.migrate()
            print(await set_broker_key(store, who, args.table, args.nkey))
        except Refused as exc:
            return _fail(prog, str(exc), 3)
        except psycopg.Error as exc:
            return _fail(prog, f"database: {str(exc).strip()}", 1)
        finally:
            await store.close()
        return 0

    return asyncio.run(run())


def config_main(argv: Sequence[str]) -> int:
    prog = "tabled floor broker-config"
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Write nats-server's accounts for the enrolled tables and the floor, each "
        "allowed only its own (docs/floor.md, 'The broker'), and the server's TLS if given.",
    )
    parser.add_argument("--config", help="floor config (its database, stream, [floor] identity)")
    parser.add_argument("--out", type=Path, help="write here, mode 0600 (default: stdout)")
    parser.add_argument("--tls-cert", type=Path, help="the server's certificate (PEM)")
    parser.add_argument("--tls-key", type=Path, help="the server's key (PEM)")
    parser.add_argument("--tls-ca", type=Path, help="the CA of client certificates (PEM)")
    parser.add_argument(
        "--verify", action="store_true", help="require a client certificate from that CA"
    )
    args = parser.parse_args(argv)
    config = _load(prog, args.config)
    tls = None
    if (args.tls_cert is None) != (args.tls_key is None):
        return _fail(prog, "--tls-cert and --tls-key go together", 2)
    if args.tls_cert is not None:
        tls = ServerTls(args.tls_cert.resolve(), args.tls_key.resolve(),
                        args.tls_ca.resolve() if args.tls_ca else None, args.verify)  # fmt: skip
    elif args.tls_ca is not None or args.verify:
        return _fail(prog, "--tls-ca and --verify go with --tls-cert and --tls-key", 2)
    try:
        floor = floor_identity(config.floor)
    except BrokerConfigError as exc:
        return _fail(prog, str(exc), 2)

    async def run() -> tuple[list[TableAccess], list[str]]:
        store = Store(config.floor.database, config.floor.subject_prefix)
        try:
            await store.migrate()
            return await broker_tables(store)
        finally:
            await store.close()

    try:
        tables, missing = asyncio.run(run())
        section = config.floor
        text = broker_config(
            tables, floor, stream=section.stream, prefix=section.subject_prefix,
            durable=section.durable, tls=tls,
        )  # fmt: skip
    except psycopg.Error as exc:
        return _fail(prog, f"database: {str(exc).strip()}", 1)
    except BrokerConfigError as exc:
        return _fail(prog, str(exc), 2)
    if missing:
        text += "# Enrolled without a broker key (cannot connect): " + ", ".join(missing) + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        try:
            write_private(args.out, text)
        except OSError as exc:
            return _fail(prog, f"--out {args.out}: {exc.strerror or exc}", 1)
    summary = f"{len(tables)} table(s) and the floor"
    if missing:
        summary += (
            f"; without a broker key, left out: {', '.join(missing)} "
            "(`tabled floor broker-key TABLE --nkey U...`)"
        )
    print(f"{prog}: {summary}" + (f"; written to {args.out}" if args.out else ""), file=sys.stderr)
    return 0
