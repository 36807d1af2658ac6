"""The broker's side of the floor: which connection may do what, written as nats-server config.

`tabled floor broker-config` writes one account for the floor's stream with a user per enrolled
table and one for the floor, each with the least it needs (docs/floor.md, "The broker"):

- a table publishes its lines on ``<prefix>.<table>.>`` only (never another table's subject);
  its JetStream calls are the stream's info (at every connection) and a consumer of its own,
  ``tabled-ship-<table>`` (the shipper) or ``tabled-cli-<table>`` (`tabled feed status|replay`),
  created only with the filter ``<prefix>.<table>.>`` (nats-server checks the filter in the
  create subject against the consumer's), pulled and deleted: the reconcile after a
  reconnection, and the message its publish was answered `duplicate` for. So it reads its own
  lines and no other table's. It subscribes to its own inboxes only
  (``_INBOX.table.<table>.>``, the prefix its client uses), so it sees no one's acks and no line
  as it passes. It cannot create, change or delete the stream or another consumer.
- the floor reads: it creates the stream if missing, (re)creates its durable consumer, pulls from
  it and acks, and (re)creates and pulls its live view's, ``<durable>-live``; its publish
  allow-list has no line subject and ``<prefix>.>`` is denied outright, so a floor's credentials
  cannot write a line.

Nobody without credentials gets in (the account has no `no_auth_user`). Identities are nkeys (the
public key only: the seed never leaves the table or the floor) or a user and password. TLS is the
server's own `tls {}` block: `server_tls` writes it with the CA that signs the tables' client
certificates when they must present one (`verify`).

The config is a pure function of the tables' ids and keys (`accounts_config`); the CLI reads the
enrolled tables and writes the file atomically, mode 0600, for nats-server's `include`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from daemon.shipper.broker import (
    READER_PURPOSES,
    floor_inbox_prefix,
    reader_name,
    table_inbox_prefix,
)

ACCOUNT = "TABLED"
_NKEY_USER = re.compile(r"^U[A-Z2-7]{55}$")
_TOKEN = re.compile(r"^[A-Za-z0-9_-]+$")


class BrokerConfigError(ValueError):
    """An entry the broker config cannot be written for (one line naming it)."""


@dataclass(frozen=True)
class Identity:
    """How one connection proves who it is: an nkey's public key, or a user and password (the
    password as nats-server takes it: plain, or a bcrypt hash `$2a$...`)."""

    nkey: str | None = None
    user: str | None = None
    password: str | None = None

    def check(self, who: str) -> None:
        if (self.nkey is None) == (self.user is None):
            raise BrokerConfigError(f"{who}: an nkey or a user and password (one of them)")
        if self.nkey is not None and not _NKEY_USER.match(self.nkey):
            raise BrokerConfigError(f"{who}: {self.nkey!r} is not an nkey user's public key (U...)")
        if self.user is not None and not self.password:
            raise BrokerConfigError(f"{who}: user {self.user!r} without a password")

    def fields(self) -> str:
        if self.nkey is not None:
            return f"nkey: {self.nkey}"
        return f"user: {_quote(self.user or '')}, password: {_quote(self.password or '')}"


@dataclass(frozen=True)
class TableAccess:
    table_id: str
    identity: Identity


@dataclass(frozen=True)
class ServerTls:
    """The server's certificate, and the CA its clients' certificates must chain to when
    `verify` (client certificates required)."""

    cert: Path
    key: Path
    ca: Path | None = None
    verify: bool = False


def _quote(text: str) -> str:
    return json.dumps(text)  # nats-server's config reads JSON strings


def _list(items: Sequence[str]) -> str:
    return "[" + ", ".join(_quote(item) for item in items) + "]"


def table_permissions(table_id: str, stream: str, prefix: str) -> dict[str, list[str]]:
    """What one table may publish and subscribe to (see the module's doc)."""
    api = "$JS.API"
    readers: list[str] = []
    for purpose in READER_PURPOSES:
        name = reader_name(table_id, purpose)
        readers += [
            # The filter in the create subject must be the consumer's (nats-server >= 2.9).
            f"{api}.CONSUMER.CREATE.{stream}.{name}.{prefix}.{table_id}.>",
            f"{api}.CONSUMER.MSG.NEXT.{stream}.{name}",
            f"{api}.CONSUMER.DELETE.{stream}.{name}",
        ]
    return {
        "publish": [f"{prefix}.{table_id}.>", f"{api}.STREAM.INFO.{stream}", *readers],
        "subscribe": [f"{table_inbox_prefix(table_id)}.>"],
    }


def floor_permissions(stream: str, prefix: str, durable: str) -> dict[str, list[str]]:
    """What the floor may publish (allowed, and denied) and subscribe to."""
    api = "$JS.API"
    live = f"{durable}-live"
    return {
        "publish": [
            f"{api}.STREAM.INFO.{stream}",
            # Not STREAM.UPDATE, PURGE or DELETE: the stream is the tables' evidence, and a
            # floor host taken over must not shorten its retention. A stream made before the
            # line bound gets it from an admin (`nats stream edit`, the floor logs the command).
            f"{api}.STREAM.CREATE.{stream}",
            f"{api}.CONSUMER.INFO.{stream}.{durable}",
            f"{api}.CONSUMER.DELETE.{stream}.{durable}",
            f"{api}.CONSUMER.CREATE.{stream}.{durable}",
            f"{api}.CONSUMER.CREATE.{stream}.{durable}.>",
            f"{api}.CONSUMER.DURABLE.CREATE.{stream}.{durable}",
            f"{api}.CONSUMER.MSG.NEXT.{stream}.{durable}",
            f"$JS.ACK.{stream}.{durable}.>",
            # The live view's consumer (daemon/floor/live.py): made anew, pulled, never acked.
            *(
                f"{api}.{what}.{stream}.{live}"
                for what in (
                    "CONSUMER.INFO",
                    "CONSUMER.DELETE",
                    "CONSUMER.CREATE",
                    "CONSUMER.DURABLE.CREATE",
                    "CONSUMER.MSG.NEXT",
                )
            ),
            f"{api}.CONSUMER.CREATE.{stream}.{live}.>",
        ],
        "publish_deny": [f"{prefix}.>"],
        "subscribe": [f"{floor_inbox_prefix(durable)}.>"],
    }


def _check_token(what: str, value: str) -> None:
    if not _TOKEN.match(value):
        raise BrokerConfigError(f"{what} {value!r}: letters, digits, - and _ only")


def accounts_config(
    tables: Sequence[TableAccess],
    floor: Identity,
    *,
    stream: str = "TABLED",
    prefix: str = "tabled",
    durable: str = "floor",
    account: str = ACCOUNT,
) -> str:
    """The `accounts {}` block: one JetStream account, a user per table and one for the floor."""
    for what, value in (("stream", stream), ("durable", durable), ("account", account)):
        _check_token(what, value)
    if durable.startswith("tabled-"):
        # The tables' own readers are named tabled-<purpose>-<table>: a table may delete those.
        raise BrokerConfigError(f"durable {durable!r}: tabled-... names are the tables' readers")
    for token in prefix.split("."):
        _check_token("subject prefix", token)
    floor.check("the floor")
    seen: set[str] = set()
    keys: dict[str, str] = {}
    users: list[str] = []
    for entry in sorted(tables, key=lambda t: t.table_id):
        _check_token("table", entry.table_id)
        if entry.table_id in seen:
            raise BrokerConfigError(f"table {entry.table_id}: listed twice")
        seen.add(entry.table_id)
        entry.identity.check(f"table {entry.table_id}")
        key = entry.identity.nkey or f"user {entry.identity.user}"
        if key in keys or key == (floor.nkey or f"user {floor.user}"):
            other = keys.get(key, "the floor")
            raise BrokerConfigError(f"table {entry.table_id}: the same identity as {other}")
        keys[key] = f"table {entry.table_id}"
        allowed = table_permissions(entry.table_id, stream, prefix)
        users.append(
            f"      # table {entry.table_id}: its own lines, its stream reads, its inboxes\n"
            f"      {{ {entry.identity.fields()},\n"
            f"        permissions: {{ publish: {{ allow: {_list(allowed['publish'])} }},\n"
            f"                       subscribe: {{ allow: {_list(allowed['subscribe'])} }} }} }}"
        )
    reads = floor_permissions(stream, prefix, durable)
    users.append(
        "      # the floor: reads the stream through its durable consumer; writes no line\n"
        f"      {{ {floor.fields()},\n"
        f"        permissions: {{ publish: {{ allow: {_list(reads['publish'])},\n"
        f"                                 deny: {_list(reads['publish_deny'])} }},\n"
        f"                       subscribe: {{ allow: {_list(reads['subscribe'])} }} }} }}"
    )
    return (
        f"# Written by `tabled floor broker-config`: {len(seen)} table(s) and the floor.\n"
        "# Include it in nats-server's config; regenerate after an enrolment, then reload.\n"
        "accounts {\n"
        f"  {account}: {{\n"
        "    jetstream: enabled\n"
        "    users: [\n" + "\n".join(users) + "\n    ]\n  }\n}\n"
    )


def server_tls(tls: ServerTls) -> str:
    """The server's `tls {}` block: TLS required on the client port; client certificates
    required and checked against `ca` when `verify`."""
    lines = [f"  cert_file: {_quote(str(tls.cert))}", f"  key_file: {_quote(str(tls.key))}"]
    if tls.ca is not None:
        lines.append(f"  ca_file: {_quote(str(tls.ca))}")
    if tls.verify:
        if tls.ca is None:
            raise BrokerConfigError("client certificates verified (--verify) need the CA (--ca)")
        lines.append("  verify: true")
    return "tls {\n" + "\n".join(lines) + "\n}\n"


def broker_config(
    tables: Sequence[TableAccess],
    floor: Identity,
    *,
    stream: str = "TABLED",
    prefix: str = "tabled",
    durable: str = "floor",
    tls: ServerTls | None = None,
) -> str:
    """What `tabled floor broker-config` writes: the accounts, and the TLS block if given."""
    text = accounts_config(tables, floor, stream=stream, prefix=prefix, durable=durable)
    return text + (server_tls(tls) if tls is not None else "")
