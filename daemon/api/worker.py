"""The API process of `tabled run --http` (`daemon.api.process` starts it; not a command).

    python -m daemon.api.worker --channel FD --listen FD

It serves the same app (`daemon.api.app.create_app`) over `RemoteTable`, a `TableFacade` made
of what the table's process sends over the channel (`daemon.contract.channel`): the latest
publication of the table's state, the journal's durable lines (kept in memory for a while, the
older ones read from the journal's files, read-only), and requests for what only the table may
do (an action, a security fact, a training control, its metrics).

Each refusal at its doors is sent to the table's process as it happens (`ForwardedRefusals`),
which counts and journals them: nothing refused is kept only here.

It ignores SIGINT and SIGTERM: the table's process owns the signals and tells it to stop (the
last journal lines of the API go in before the table's journal closes); if the table's process
goes away, the channel ends and so does this process.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import gc
import itertools
import json
import os
import pickle
import signal
import socket
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import structlog

from daemon.api.app import create_app
from daemon.api.context import AppContext
from daemon.api.errors import ApiError
from daemon.api.gate import CALLER, NAMED, SHORT, RefusalLog
from daemon.api.remote_journal import RemoteJournal, RemoteSubscription
from daemon.api.server import ApiServer
from daemon.api.snapshots import StateCache
from daemon.api.tokens import Principal, SentTokens
from daemon.config import TableConfig
from daemon.contract import journal_feed
from daemon.contract.channel import (
    HEADER,
    LINES,
    MAX_FROM_API,
    MAX_TO_API,
    PICKLE,
    ChannelError,
    json_frame,
    read_frame,
)
from daemon.contract.facade import ActionSpec, TableMetrics
from daemon.contract.published import Published
from daemon.journal.format import decode_line
from daemon.logging import configure_logging

log = structlog.get_logger("tabled.api")


class ForwardedRefusals(RefusalLog):
    """The doors' record of refusals, in the API process: each refusal is sent to the table's
    process as it happens (one small frame, in the channel's socket before the refused request
    is answered), and the table's process counts and journals them (`ApiProcess.refusals`).
    An API process killed, or stuck and then killed, takes none of them with it."""

    def __init__(self, table: RemoteTable, clock: Callable[[], float], interval: float) -> None:
        super().__init__(table.journal_security, clock, interval=interval)
        self._table = table

    async def noted(  # noqa: PLR0917 - as RefusalLog.noted
        self,
        event: str,
        reason: str,
        client: str,
        detail: str | None,
        locked: Sequence[str] = (),
        on_guard: bool = False,
    ) -> None:
        self._table.tell(
            {
                "t": "refused",
                "event": event,
                "reason": reason,
                "client": client[:SHORT],
                "detail": None if detail is None else detail[:SHORT],
                "locked": [name[:SHORT] for name in locked[:NAMED]],
                "on_guard": on_guard,
            }
        )

    async def flush_due(self) -> None:
        """The table's process keeps the summaries' times."""

    async def close(self) -> None:
        """What is counted is the table's process's already."""


class RemoteFeed:
    """`app.state.feed` (the shipper) as the API process reaches it: its status, asked."""

    def __init__(self, table: RemoteTable) -> None:
        self._table = table

    async def status(self) -> Any:
        return await self._table.request("feed_status", {})


class RemoteTable:
    """`TableFacade` over the channel to the table's process."""

    def __init__(self, init: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        self.config = init["config"]
        self._actions: list[ActionSpec] = list(init["actions"])
        self._published: Published = init["published"]
        self._wall_offset: float = init["wall_offset"]
        directory = init["journal_dir"]
        self.journal = RemoteJournal(
            Path(directory) if directory else None, int(init["durable_seq"])
        )
        self._writer = writer
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self.on_state: Callable[[], None] | None = None
        self.on_tokens: Callable[[dict[str, Principal]], None] | None = None
        self._gone = False

    # ---- reads: what the table sent ---------------------------------------------------------

    def wall(self) -> float:
        """The table's wall clock (its offset from this machine's, as last sent)."""
        return time.time() + self._wall_offset

    def published(self) -> Published:
        return self._published

    def actions(self) -> list[ActionSpec]:
        return list(self._actions)

    def snapshot(self) -> dict[str, Any]:
        state: dict[str, Any] = json.loads(self._published.state)
        state["server_time"] = self.wall()
        return state

    def legal_actions(self, role: str) -> list[str]:
        return list(self._published.legal.get(role, ()))

    def device_status(self) -> list[dict[str, Any]]:
        status: list[dict[str, Any]] = json.loads(self._published.devices)
        return status

    def journal_query(
        self,
        *,
        round: str | None = None,
        event: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        return journal_feed.query(
            self.journal,  # type: ignore[arg-type]  # what `query` reads of a Journal
            round=round,
            event=event,
            since=since,
            until=until,
            limit=limit,
        )

    def subscribe(self, after_seq: int | None = None) -> RemoteSubscription:
        return RemoteSubscription(self.journal, after_seq)

    def metrics(self) -> TableMetrics:
        raise RuntimeError("the table is in another process: use metrics_async")

    # ---- through the table's process --------------------------------------------------------

    async def metrics_async(self) -> TableMetrics:
        metrics: TableMetrics = await self.request("metrics", {})
        return metrics

    async def act(
        self, action: str, actor: str, role: str, payload: dict[str, Any]
    ) -> dict[str, Any]:
        raise RuntimeError("the table's process takes a person's token with an action: act_as")

    async def act_as(
        self,
        action: str,
        actor: str,
        role: str,
        payload: dict[str, Any],
        *,
        token: str,
        request_id: str | None,
    ) -> dict[str, Any]:
        """`act`, with the token the caller presented (the table's process looks the person up
        itself) and the request's `request_id` (the table's process answers a repeat of it with
        the first answer, `replayed`; `request_id_reused` when it asked something else)."""
        args = {
            "action": action,
            "actor": actor,
            "role": role,
            "payload": payload,
            "token": token,
            "request_id": request_id,
        }
        answer: dict[str, Any] = await self.request("act", args)
        return answer

    async def journal_security(self, event: str, payload: dict[str, Any]) -> None:
        """With the token of the request being served, if any (`CALLER`): the table's process
        checks that a fact naming a person is the token's holder's."""
        args: dict[str, Any] = {"event": event, "payload": payload}
        token = CALLER.get()
        if token:
            args["token"] = token
        await self.request("journal_security", args)

    async def training(self, name: str, args: list[Any], token: str) -> Any:
        return await self.request("training", {"name": name, "args": args, "token": token})

    def tell(self, message: dict[str, Any]) -> None:
        """Send `message` to the table's process; no answer is waited for."""
        if not self._gone:
            self._writer.write(json_frame(message))

    async def request(self, op: str, args: dict[str, Any]) -> Any:
        if self._gone:
            raise ConnectionError("the table's process is gone")
        ident = next(self._ids)
        sent = json_frame({"t": "call", "id": ident, "op": op, "args": args})
        if len(sent) - HEADER.size > MAX_FROM_API:
            # The table's process would refuse it by its header, and replace this process with
            # every console's connection: the request is refused here instead, nothing sent.
            raise ApiError(
                413,
                "body_too_large",
                f"{op}: a request of {len(sent)} bytes to the table (at most {MAX_FROM_API}); "
                "nothing was done",
            )
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[ident] = future
        try:
            self._writer.write(sent)
            return await future
        finally:
            self._waiting.pop(ident, None)

    # ---- the channel ------------------------------------------------------------------------

    async def read(self, reader: asyncio.StreamReader, stop: Callable[[], None]) -> None:
        """Everything the table's process sends, in order, until it closes the channel."""
        try:
            while True:
                got = await read_frame(reader, MAX_TO_API)
                if got is None:
                    return
                kind, body = got
                if kind == LINES:
                    records = [decode_line(line + b"\n") for line in body.split(b"\n")[:-1]]
                    await self.journal.add(records)
                elif kind == PICKLE:
                    self._receive(pickle.loads(body), stop)  # noqa: S301 - the table's own process
                else:
                    raise ChannelError(f"a frame of kind {kind!r}")
        except (ChannelError, ValueError, OSError) as exc:
            log.error("api.channel_broken", error=str(exc))
        finally:
            self._gone = True
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(ConnectionError("the table's process is gone"))
            self.journal.close()
            stop()

    def _receive(self, message: dict[str, Any], stop: Callable[[], None]) -> None:
        kind = message.get("t")
        if kind == "state":
            self._published, self._wall_offset = message["published"], message["wall_offset"]
            if self.on_state is not None:
                self.on_state()
        elif kind == "reply":
            future = self._waiting.get(message["id"])
            if future is not None and not future.done():
                if "error" in message:
                    future.set_exception(message["error"])
                else:
                    future.set_result(message.get("value"))
        elif kind == "tokens":
            if self.on_tokens is not None:
                self.on_tokens(message["tokens"])
        elif kind == "ping":
            self._writer.write(json_frame({"t": "pong"}))
        elif kind == "stop":
            stop()


async def serve(channel: socket.socket, listening: socket.socket) -> None:
    reader, writer = await asyncio.open_unix_connection(sock=channel)
    got = await read_frame(reader, MAX_TO_API)
    if got is None or got[0] != PICKLE:
        raise ChannelError("no start-up facts from the table's process")
    init = pickle.loads(got[1])  # noqa: S301 - from the table's own process
    configure_logging(init["log_level"])
    table = RemoteTable(init, writer)
    # The people of the tokens file, and the TLS certificate and key, as the table's process
    # sent them: this process may not read those files (daemon.api.user).
    tokens = SentTokens(init["tokens"], ask=lambda: table.request("tokens", {}))
    config = _with_tls(init["config"], init["tls"])
    app = create_app(table, config, tokens=tokens, **init["app_options"])
    table.on_tokens = tokens.replace
    if init["feed"]:
        app.state.feed = RemoteFeed(table)
    context: AppContext = app.state.context
    refusals = context.gate.refusals
    context.gate.refusals = ForwardedRefusals(table, refusals.clock, refusals.interval)
    context.state_cache = StateCache(table, table.wall)

    def state_changed() -> None:
        if context.hub is not None:
            context.hub.state_changed()

    table.on_state = state_changed
    server = ApiServer(app, init["listen"], sock=listening)
    # What start-up made (the web stack's modules, the app, its models) lives as long as the
    # process: kept out of the collector's full passes, which otherwise stopped this loop for
    # 90 ms under the bench's load (37 ms with them frozen; state read p99 91 -> 38-44 ms).
    gc.collect()
    gc.freeze()
    writer.write(json_frame({"t": "ready"}))
    reading = asyncio.ensure_future(table.read(reader, server.stop))
    try:
        await server.serve()
    finally:
        if context.hub is not None:
            await context.hub.close()
        with contextlib.suppress(Exception):
            writer.write(json_frame({"t": "bye"}))
            await writer.drain()
        reading.cancel()
        with contextlib.suppress(BaseException):
            await reading
        writer.close()


def _with_tls(config: TableConfig, tls: tuple[bytes, bytes] | None) -> TableConfig:
    """`config` serving TLS from the certificate and key sent (in memory files, named
    /proc/self/fd/N, which only this process can open), not from the configured files."""
    if tls is None:
        return config
    names = []
    for name, data in zip(("tls_cert", "tls_key"), tls, strict=True):
        fd = os.memfd_create(name)  # kept open while the process lives: uvicorn reads it
        os.write(fd, data)
        names.append(Path(f"/proc/self/fd/{fd}"))
    api = dataclasses.replace(config.api, tls_cert=names[0], tls_key=names[1])
    return dataclasses.replace(config, api=api)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the API process of `tabled run --http`")
    parser.add_argument("--channel", type=int, required=True)
    parser.add_argument("--listen", type=int, required=True)
    args = parser.parse_args(argv)
    # The table's process owns the signals: it tells this one to stop (a Ctrl-C reaches both).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    channel = socket.socket(fileno=args.channel)
    listening = socket.socket(fileno=args.listen)
    try:
        asyncio.run(serve(channel, listening))
    except Exception as exc:
        log.error("api.process_failed", error=repr(exc))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
