"""The live view's consumer: `<durable>-live` on the stream, the last message of each subject
at its start and then every new one, handed to the view (daemon/floor/live.py, which says what
the live view is and what it shows)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

import nats
import psycopg
import structlog
from nats.js import api as js_api
from nats.js.errors import NotFoundError

from daemon.floor.config import FloorSection
from daemon.floor.consumer import ANSWER_SECONDS, NATS_HDR_STATUS, _Puller, _Raw, connect, msg_id_of
from daemon.floor.live import (
    CHECK_SECONDS,
    INACTIVE_SECONDS,
    LIVE_BATCH,
    PULL_SECONDS,
    LiveView,
    live_name,
)
from daemon.floor.store import Store
from daemon.floor.storebase import REGISTRY_SECONDS

log = structlog.get_logger("tabled.floor")


class _Arrivals(_Puller):
    """The live consumer's pulls: one request at a time, kept open PULL_SECONDS, each message
    handed on as it arrives (the history's fetch waits for its batch; a view must not wait)."""

    def __init__(self, nc: Any, stream: str, name: str) -> None:
        super().__init__(nc, stream, name)
        self._left = 0  # messages the request in flight may still bring
        self._asked = 0.0

    def _on_raw(self, subject: bytes, reply: bytes, data: bytes, headers: bytes | None) -> None:
        if headers and headers[NATS_HDR_STATUS : NATS_HDR_STATUS + 1] == b" ":
            if headers[NATS_HDR_STATUS + 1 : NATS_HDR_STATUS + 4] != b"100":
                self._left = 0  # 404, 408 or 409: the request is over
                self._done.set()
            return
        self._msgs.append(_Raw(subject, reply, data, msg_id_of(headers)))
        self._left -= 1
        self._done.set()

    def abort(self) -> None:
        self._left = 0  # the request died with the connection: ask again
        super().abort()

    async def arrivals(self) -> list[_Raw]:
        """What arrived since the last call (waiting for the first); [] when a request ended."""
        if self._left <= 0 or time.monotonic() - self._asked > PULL_SECONDS + ANSWER_SECONDS:
            self._left, self._asked = LIVE_BATCH, time.monotonic()
            body = {"batch": LIVE_BATCH, "expires": int(PULL_SECONDS * 1e9)}
            await self.nc.publish(self.subject, json.dumps(body).encode(), reply=self.inbox)
        if not self._msgs:
            self._done.clear()
            await asyncio.wait_for(self._done.wait(), PULL_SECONDS + ANSWER_SECONDS)
        msgs, self._msgs = self._msgs, []
        return msgs


class LiveConsumer:
    """The live view's consumer: `<durable>-live`, made anew at each start (the last message
    of each subject, then what comes), no acks; its own connection, so a backlog's batches on
    the history's never queue ahead of it."""

    def __init__(self, config: FloorSection, view: LiveView, reader: Store) -> None:
        self.config, self.view, self.reader = config, view, reader
        self._puller: _Arrivals | None = None
        self._nc: Any = None

    async def _subscribe(self, nc: Any) -> _Arrivals:
        cfg, js = self.config, nc.jetstream()
        name = live_name(cfg.durable)
        with contextlib.suppress(NotFoundError):
            await js.delete_consumer(cfg.stream, name)
        await js.add_consumer(
            cfg.stream,
            js_api.ConsumerConfig(
                durable_name=name,
                deliver_policy=js_api.DeliverPolicy.LAST_PER_SUBJECT,
                ack_policy=js_api.AckPolicy.NONE,
                filter_subject=f"{cfg.subject_prefix}.>",
                inactive_threshold=INACTIVE_SECONDS,
                # A view, not a record: one replica in memory (made anew at the next start).
                num_replicas=1,
                mem_storage=True,
            ),
        )
        log.info("floor.live_consuming", stream=cfg.stream, consumer=name)
        puller = _Arrivals(nc, cfg.stream, name)
        await puller.start()
        return puller

    async def _registry(self, stop: asyncio.Event) -> None:
        """The registry read again every REGISTRY_SECONDS, beside the pulls (a slow database
        delays no line); the database down leaves the last one read."""
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), REGISTRY_SECONDS)
            try:
                await self.view.load(self.reader)
            except psycopg.Error as exc:
                log.warning("floor.live_registry_unavailable", problem=str(exc).strip()[:300])

    async def _check(self) -> None:
        """Nothing heard for CHECK_SECONDS: a consumer the broker dropped, or that does not
        answer (one replica: its node may be the one a cluster lost), is made anew."""
        try:
            await self._nc.jetstream().consumer_info(
                self.config.stream, live_name(self.config.durable)
            )
        except Exception as exc:
            if not isinstance(exc, NotFoundError):
                log.warning("floor.live_unavailable", problem=str(exc) or type(exc).__name__)
            self._puller = None

    async def _connect(self) -> Any:
        async def disconnected() -> None:
            self.view.stats.connected = False
            if self._puller is not None:
                self._puller.abort()

        async def reconnected() -> None:
            self.view.stats.connected = True

        nc = await connect(self.config, "tabled-floor-live", disconnected, reconnected)
        self.view.stats.connected = True
        return nc

    async def run(self, stop: asyncio.Event) -> None:
        """Pull and apply until `stop` is set."""
        delay = 0.2
        heard = time.monotonic()
        registry: asyncio.Task[None] | None = None
        try:
            while not stop.is_set():
                try:
                    if registry is None:
                        await self.view.load(self.reader)  # the tables, before any line
                        registry = asyncio.create_task(self._registry(stop))
                    if self._nc is None:
                        self._nc = await self._connect()
                    if self._puller is None:
                        self._puller = await self._subscribe(self._nc)
                        heard, delay = time.monotonic(), 0.2
                    msgs = await self._puller.arrivals()
                    if not msgs:
                        raise TimeoutError
                except (TimeoutError, nats.errors.TimeoutError):
                    if time.monotonic() - heard > CHECK_SECONDS and self._nc is not None:
                        heard = time.monotonic()
                        await self._check()
                    continue
                except Exception as exc:  # any broker trouble: back off and retry
                    log.warning("floor.live_unavailable", problem=str(exc) or type(exc).__name__)
                    self._puller = None
                    if self._nc is not None and self._nc.is_closed:
                        self._nc = None
                else:
                    heard = time.monotonic()
                    self.view.take(msgs)
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), delay)
                delay = min(delay * 2, 2.0)
        finally:
            if registry is not None:
                registry.cancel()
                with contextlib.suppress(BaseException):
                    await registry
            if self._nc is not None:
                with contextlib.suppress(Exception):
                    await self._nc.close()
