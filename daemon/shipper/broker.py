"""The shipper's side of NATS: connecting, the stream's settings, what the stream holds of a
table, the shipper's status, and how a failure is said. `daemon.shipper.engine` is the pump that
uses them; `tabled feed status|replay` use them directly."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import ssl
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import nats
import nats.errors
import nats.js.errors
from nats.js import api as js_api

from daemon.journal.format import MAX_LINE_BYTES
from daemon.shipper.config import (
    NATS_FILES,
    FeedConfig,
    NatsClient,
    secrets_problem,
    uses_tls,
)

if TYPE_CHECKING:
    from nats.aio.client import Client
    from nats.js.client import JetStreamContext

MSG_ID = "Nats-Msg-Id"
CONFLICT_EVENT = "conflict"  # <prefix>.<table>.conflict: a line whose id another message took
EXPECTED_STREAM = "Nats-Expected-Stream"
SITE_HEADER = "Tabled-Site"


def table_inbox_prefix(table_id: str) -> str:
    """The inbox prefix of a table's connection: `_INBOX.table.<id>`."""
    return f"_INBOX.table.{table_id}"


def floor_inbox_prefix(durable: str) -> str:
    """The inbox prefix of the floor's connection: `_INBOX.floor.<durable consumer>`."""
    return f"_INBOX.floor.{durable}"


class FeedError(Exception):
    """A failure of the feed: the shipper backs off and tries again; the table plays on."""


class FeedMismatch(FeedError):
    """The stream holds lines for this table that are not this journal's."""


@dataclass
class FeedStatus:
    """What the shipper is doing, for /metrics, /api/health, `tabled status`, `feed status`."""

    state: str = "starting"  # starting | shipping | degraded | stopped
    connected: bool = False
    server: str | None = None
    stream: str = ""
    cursor: int = 0
    head: int = 0
    oldest_unacked_wall: float | None = None
    last_error: str | None = None
    degraded_since: float | None = None
    acked_total: int = 0
    sent_total: int = 0
    refused_total: int = 0
    conflicts_total: int = 0
    last_conflict: int | None = None  # the seq of the last line found in conflict
    reconnects_total: int = 0
    heads_total: int = 0  # signed heads published (daemon.journal.provenance)
    notes: list[str] = field(default_factory=list)

    @property
    def lag_lines(self) -> int:
        return max(0, self.head - self.cursor)

    def lag_seconds(self, now: float | None = None) -> float:
        if self.lag_lines == 0 or self.oldest_unacked_wall is None:
            return 0.0
        return max(0.0, (time.time() if now is None else now) - self.oldest_unacked_wall)

    def as_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "connected": self.connected,
            "server": self.server,
            "stream": self.stream,
            "cursor": self.cursor,
            "head": self.head,
            "lag_lines": self.lag_lines,
            "lag_seconds": round(self.lag_seconds(), 3),
            "last_error": self.last_error,
            "degraded_since": self.degraded_since,
            "acked_total": self.acked_total,
            "sent_total": self.sent_total,
            "refused_total": self.refused_total,
            "conflicts_total": self.conflicts_total,
            "last_conflict": self.last_conflict,
            "reconnects_total": self.reconnects_total,
            "notes": list(self.notes),
        }


def subjects_cover(patterns: list[str], prefix_tokens: list[str]) -> bool:
    """True if one of the stream's subject `patterns` takes every ``<prefix tokens>.<...>``."""
    for pattern in patterns:
        tokens = pattern.split(".")
        for i, token in enumerate(tokens):
            if token == ">":  # noqa: S105 - a subject token, not a password
                if i <= len(prefix_tokens):
                    return True
                break
            if i >= len(prefix_tokens) or (token not in ("*", prefix_tokens[i])):
                break
    return False


def tls_context(section: NatsClient) -> ssl.SSLContext | None:
    """The TLS of a NATS client section (its CA, its client certificate), or None for none."""
    if not uses_tls(section):
        return None
    context = ssl.create_default_context(
        cafile=str(section.tls_ca) if section.tls_ca is not None else None
    )
    if section.tls_cert is not None and section.tls_key is not None:
        context.load_cert_chain(str(section.tls_cert), str(section.tls_key))
    return context


NKEY_SEED_PREFIX = "SU"  # an nkey user seed: `tabled feed nkey`, `nsc`, `nk -gen user`
JWT_MARK = "-----BEGIN NATS USER JWT-----"


def auth_options(section: NatsClient, where: str = "feed") -> dict[str, Any]:
    """nats-py's connect options for a section's identity and TLS: FeedError in one line when a
    file is missing, not private, or not what its key says (`where` is the section's name)."""
    problem = secrets_problem(section, where)
    if problem:
        raise FeedError(problem)
    for key in NATS_FILES:
        file = getattr(section, key)
        if file is not None and not file.is_file():
            raise FeedError(f"{where}.{key}: {file}: no such file")
    options: dict[str, Any] = {}
    if section.user is not None:
        options["user"], options["password"] = section.user, section.password
    if section.token is not None:
        options["token"] = section.token
    if section.creds is not None:
        try:
            text = section.creds.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise FeedError(f"{where}.creds: {section.creds}: cannot read it: {exc}") from None
        if JWT_MARK in text:
            options["user_credentials"] = str(section.creds)
        elif text.startswith(NKEY_SEED_PREFIX) and "\n" not in text:
            options["nkeys_seed_str"] = text
        else:
            raise FeedError(
                f"{where}.creds: {section.creds}: neither an nkey user seed (SU...) nor a NATS "
                ".creds file"
            )
    try:
        options["tls"] = tls_context(section)
    except (OSError, ssl.SSLError) as exc:
        raise FeedError(f"{where}.tls_ca/tls_cert/tls_key: {exc}") from None
    return options


def describe(exc: BaseException) -> str:
    """One line a person can act on, for the journal and the CLI."""
    if isinstance(exc, nats.errors.NoServersError | ConnectionRefusedError):
        return "no NATS server answers"
    if isinstance(exc, nats.errors.AuthorizationError):
        return "the NATS server refused the credentials (authorization violation)"
    if isinstance(exc, nats.errors.TimeoutError | asyncio.TimeoutError | TimeoutError):
        return "the NATS server did not answer in time"
    if isinstance(exc, nats.errors.NoRespondersError):
        return "JetStream does not answer (not enabled on the server, or no permission)"
    text = (str(exc).strip() or type(exc).__name__).removeprefix("nats: ").strip("'")
    if "authorization violation" in text.lower():
        return "the NATS server refused the credentials (authorization violation)"
    if "authentication expired" in text.lower():
        return "the NATS server refused the credentials (expired)"
    return text


async def connect(feed: FeedConfig, table_id: str, **callbacks: Any) -> Client:
    """A NATS connection for this table's feed; it never reconnects by itself (see `Shipper`)."""
    options: dict[str, Any] = {
        "servers": list(feed.servers),
        "name": f"tabled {table_id}",
        "allow_reconnect": False,
        "max_reconnect_attempts": 1,
        "reconnect_time_wait": 0,
        "connect_timeout": feed.connect_timeout_seconds,
        # Replies come to this table's inboxes only, the one subscription its broker
        # permissions allow (`tabled floor broker-config`).
        "inbox_prefix": table_inbox_prefix(table_id),
        **auth_options(feed),
    }
    errors: list[BaseException] = []

    async def on_error(exc: Exception) -> None:
        errors.append(exc)
        handler = callbacks.get("error_cb")
        if handler is not None:
            await handler(exc)

    options.update({k: v for k, v in callbacks.items() if k != "error_cb"})
    options["error_cb"] = on_error
    try:
        return await nats.connect(**options)
    except nats.errors.NoServersError:
        # The reason is in the errors the client met on the way (refused, auth, TLS).
        auth = [e for e in errors if isinstance(e, nats.errors.AuthorizationError)]
        cause = auth[-1] if auth else (errors[-1] if errors else None)
        if cause is not None and not isinstance(cause, OSError):
            raise FeedError(describe(cause)) from None
        raise FeedError("no NATS server answers at " + ", ".join(feed.servers)) from None
    except (OSError, ssl.SSLError) as exc:
        raise FeedError(f"cannot connect: {exc}") from None
    except nats.errors.Error as exc:  # refused by the server (credentials, TLS)
        raise FeedError(describe(exc)) from None


# In a cluster, a stream whose leader was just lost answers nothing until its replicas have
# elected another (4-6 s measured with nats-server 2.9 after a SIGKILL, bench/bench_cluster.py).
STREAM_ASK_SECONDS = 0.25


async def stream_answers(nc: Client, feed: FeedConfig) -> None:
    """Until the stream answers STREAM.INFO, asking every quarter second for at most
    `ack_timeout_seconds`: a (re)connection during a cluster's election starts shipping within
    a quarter second of the new leader, not up to a whole ack timeout later. No answer by then
    is a FeedError (the back-off, then another connection); any other answer, a refusal
    included, is `ensure_stream`'s to ask again and say what it means."""
    quick = nc.jetstream(timeout=STREAM_ASK_SECONDS)
    deadline = time.monotonic() + feed.ack_timeout_seconds
    while True:
        try:
            await quick.stream_info(feed.stream)
        except (TimeoutError, nats.errors.TimeoutError):
            if time.monotonic() < deadline:
                continue
            raise FeedError(
                f"stream {feed.stream} did not answer within {feed.ack_timeout_seconds:g} s "
                "(a cluster electing its leader, or JetStream unavailable)"
            ) from None
        except Exception:  # noqa: S110 - not ours to judge: ensure_stream says it
            pass
        return


async def ensure_stream(js: JetStreamContext, feed: FeedConfig, table_id: str) -> list[str]:
    """Create the stream if missing, else check it takes our subjects; returns notes."""
    notes: list[str] = []
    try:
        info = await js.stream_info(feed.stream)
    except nats.js.errors.NotFoundError:
        try:
            await _create_stream(js, feed)
        except Exception as exc:
            raise FeedError(
                f"stream {feed.stream} does not exist and this table could not create it "
                f"({describe(exc)}); create it from the floor (docs/floor.md)"
            ) from None
        return notes
    subjects = list(info.config.subjects or [])
    if not subjects_cover(subjects, [*feed.subject_prefix.split("."), table_id]):
        raise FeedError(
            f"stream {feed.stream} exists with subjects {subjects}, which do not take "
            f"{feed.subject_prefix}.{table_id}.>; add {feed.stream_subjects} to its subjects "
            f"or name another stream in [feed] stream"
        )
    window = info.config.duplicate_window or 0.0
    if window < feed.duplicate_window_seconds:
        notes.append(
            f"stream {feed.stream}: de-duplication window {window:g} s, shorter than the "
            f"configured {feed.duplicate_window_seconds:g} s"
        )
    if info.config.storage != js_api.StorageType.FILE:
        notes.append(f"stream {feed.stream}: {info.config.storage} storage, not file")
    return notes


@dataclass(frozen=True)
class Stored:
    """A message of this table the stream holds: its subject, headers, body and stream seq."""

    subject: str
    headers: dict[str, str] | None
    data: bytes
    seq: int


def reader_name(table_id: str, purpose: str) -> str:
    """The consumer a table reads its own messages through: `tabled-<purpose>-<table>`
    (`ship`: the daemon's shipper and `tabled feed ship`; `cli`: `tabled feed status|replay`)."""
    return f"tabled-{purpose}-{table_id}"


READER_PURPOSES = ("ship", "cli")


async def own_messages(
    js: JetStreamContext,
    feed: FeedConfig,
    table_id: str,
    *,
    start: int | None = None,
    limit: int = 1,
    headers_only: bool = False,
    purpose: str = "ship",
) -> list[Stored]:
    """This table's messages in the stream, read through a consumer filtered on its own
    subjects (never a message of another table): the last one (`start` None), or up to `limit`
    from stream seq `start` on. A consumer, not a message get by seq: the broker binds the
    filter to the consumer's name in the create subject, so a table's permissions
    (`tabled floor broker-config`) let it read its own lines and no other table's."""
    name = reader_name(table_id, purpose)
    with contextlib.suppress(nats.js.errors.NotFoundError):
        await js.delete_consumer(feed.stream, name)
    config = js_api.ConsumerConfig(
        name=name,
        filter_subject=f"{feed.subject_prefix}.{table_id}.>",
        ack_policy=js_api.AckPolicy.NONE,
        deliver_policy=(
            js_api.DeliverPolicy.LAST if start is None else js_api.DeliverPolicy.BY_START_SEQUENCE
        ),
        opt_start_seq=start,
        headers_only=headers_only or None,
        inactive_threshold=60.0,  # gone by itself if this process dies before deleting it
        mem_storage=True,
        num_replicas=1,
    )
    info = await js.add_consumer(feed.stream, config)
    out: list[Stored] = []
    try:
        pending = int(info.num_pending or 0)
        if not pending:
            return out
        sub = await js.pull_subscribe_bind(name, feed.stream)
        try:
            want = min(limit, pending)
            while len(out) < want:
                batch = await sub.fetch(
                    min(want - len(out), 1000), timeout=feed.ack_timeout_seconds
                )
                for msg in batch:
                    out.append(
                        Stored(
                            msg.subject,
                            dict(msg.headers) if msg.headers else None,
                            msg.data,
                            msg.metadata.sequence.stream,
                        )
                    )
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        return out
    finally:
        with contextlib.suppress(Exception):
            await js.delete_consumer(feed.stream, name)


async def last_stored(
    js: JetStreamContext, feed: FeedConfig, table_id: str, purpose: str = "ship"
) -> Stored | None:
    """The newest message of this table in the stream, or None."""
    found = await own_messages(js, feed, table_id, purpose=purpose)
    return found[0] if found else None


def stored_seq(msg: Any, table_id: str) -> int | None:
    """The journal seq a stored message of this table is about: a line's (`<table>:<seq>`, or
    `<table>:<seq>:conflict:<sha16>` on the conflict subject), or the line a signed head vouches
    for (`<table>:head:<seq>`); None for anything else."""
    msg_id = (msg.headers or {}).get(MSG_ID, "")
    parts = msg_id.split(":")
    if len(parts) == 4 and parts[2] == "conflict":
        parts = parts[:2]
    elif len(parts) == 3 and parts[1] == "head":
        parts = [parts[0], parts[2]]
    if len(parts) != 2 or parts[0] != table_id or not parts[1].isdigit():
        return None
    return int(parts[1])


def is_head(msg: Any, table_id: str) -> bool:
    """Whether a stored message is one of this table's signed heads (docs/floor.md)."""
    return str(getattr(msg, "subject", "")).endswith(f".{table_id}.head")


async def stored_message(
    js: JetStreamContext, feed: FeedConfig, table_id: str, seq: int
) -> Stored | None:
    """The stream's message at stream sequence `seq` if it is one of this table's subjects;
    None when it is not (another table's, or gone): only the table's own are readable."""
    found = await own_messages(js, feed, table_id, start=seq)
    return found[0] if found and found[0].seq == seq else None


def conflict_msg_id(table_id: str, seq: int, line: bytes) -> str:
    """The id of a table's own line published on the conflict subject:
    ``<table>:<seq>:conflict:<first 16 hex of the line's SHA-256>``."""
    return f"{table_id}:{seq}:conflict:{hashlib.sha256(line).hexdigest()[:16]}"


async def _create_stream(js: JetStreamContext, feed: FeedConfig) -> None:
    await js.add_stream(
        js_api.StreamConfig(
            name=feed.stream,
            subjects=[feed.stream_subjects],
            storage=js_api.StorageType.FILE,
            retention=js_api.RetentionPolicy.LIMITS,
            discard=js_api.DiscardPolicy.OLD,
            duplicate_window=feed.duplicate_window_seconds,
            max_age=feed.max_age_days * 86400.0,
            max_bytes=feed.max_bytes,
            max_msg_size=MAX_LINE_BYTES,
            num_replicas=feed.replicas,
        )
    )
