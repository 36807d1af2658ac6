"""`tabled run --http`: the operator API in a process of its own (`daemon.api.worker`).

    api = ApiProcess.build(served(table), config, listen, feed=shipper)  # on the table's loop
    url = api.url()          # bound now: a taken port fails the start
    api.start()              # the API process starts; the table goes on meanwhile
    ...
    await api.stop()         # before the table stops: the API's last journal lines go in

The table's process keeps the devices, the procedure and the journal; it never runs API code,
and no API work competes with the table's loop for the interpreter (an API on a thread of the
same process did: at 200 state reads a second and fifty consoles the table lost a quarter of
its rounds on a quiet machine, bench/bench_api_load.py). Across the channel
(`daemon.contract.channel`, an anonymous socket pair):

- to the API process: the start-up facts (config, actions, the journal's folder and durable
  seq), each publication of the table's state (`daemon.table.publish.publisher`), and the
  journal's durable lines as they are on disk (one subscription, forwarded as they come);
- from it: requests (an action, a security fact, a training control, a metrics scrape), JSON
  only, small and checked field by field (`daemon.api.requests`, this class's request half).
  The security facts it asks to journal (`api.forbidden`, named actor and all, on its word)
  have a budget here (`facts`: `FACTS_PER_WINDOW` lines of each a minute); past it they are
  counted into one `api.facts_over_budget` summary a minute, so a taken-over API process
  cannot fill the disk.

The listening socket is bound here (a taken port or a refused address fails `tabled run` before
it serves, as before) and handed to the API process, so connections made while it (re)starts
wait in the socket's backlog. If the API process dies, the table goes on: the death is logged
(`api.process_died`) and journaled, and a new API process starts (after 0.5 s, doubling to
30 s while it keeps dying). If it stops reading the channel, it is killed and restarted the
same way, and so is one that answers no ping for 10 s (a minute to start): the table never
waits for it. `stop()` asks it to end (its open connections closed, its last journal lines
sent) and kills it after `STOP_TIMEOUT`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import socket
import sys
import time
from typing import TYPE_CHECKING, Any

import structlog

from daemon.api.acts import Answered, People
from daemon.api.app import create_app
from daemon.api.gate import (
    FACTS_PER_WINDOW,
    RefusalBudget,
    RefusalLog,
)
from daemon.api.requests import Requests
from daemon.api.server import ApiServer
from daemon.api.tokens import Principal, TokenStore
from daemon.api.user import ApiUser, api_user, as_user, journal_problem
from daemon.contract.channel import (
    LINES,
    ChannelError,
    frame,
    pickle_frame,
)
from daemon.contract.facade import Served
from daemon.journal import JournalClosed, SubscriberLagged

if TYPE_CHECKING:
    from daemon.config import TableConfig

log = structlog.get_logger("tabled.api")

STOP_TIMEOUT = 1.0  # seconds the API process has to end its connections before it is killed
RESTART_FIRST, RESTART_MAX = 0.5, 30.0  # seconds before a dead API process is started again
STABLE = 60.0  # seconds an API process must live for the next death to restart it at once
MAX_BUFFERED = 16 << 20  # bytes waiting for the API process to read: more, and it is stuck
PING_EVERY = 2.0  # seconds between two pings of the API process (it answers from its loop)
TOKENS_EVERY = 0.5  # seconds between two looks at the tokens file for the API process
UNRESPONSIVE = 10.0  # seconds without a word from the API process: it is hung, and killed
START_GRACE = 60.0  # seconds a new API process has to say its first word (imports, the app)
FORWARD_QUEUE = 8192  # durable events waiting for the forwarder before it must read the files


class ApiProcess(Requests):
    """The API server of one table, served from a process of its own."""

    def __init__(
        self,
        served: Served,
        config: TableConfig,
        listen: str,
        server: ApiServer,
        *,
        feed: Any = None,
        app_options: dict[str, Any] | None = None,
        user: ApiUser | None = None,
    ) -> None:
        # The table, as its facade, its journal and its clock (daemon.contract.facade.Served).
        self._table, self._journal, self._wall = served.facade, served.journal, served.wall
        self._config, self._listen = config, listen
        # Who the API process runs as (daemon.api.user): None, the daemon's own user.
        self.user = user
        # The tokens file as the table's process reads it for the API process, which may not:
        # its people are sent at the start and again whenever the file changes.
        self._tokens = TokenStore(config.api.tokens_file)
        self._sent_tokens: dict[str, Principal] = {}
        self.server, self.publisher, self._feed = server, served.publisher, feed
        self._app_options = app_options or {}
        self._writer: asyncio.StreamWriter | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._supervisor: asyncio.Task[None] | None = None
        self._forwarder: asyncio.Task[None] | None = None
        self._answering: set[asyncio.Task[None]] = set()
        self._stopping = False
        self._heard = 0.0  # when the API process last sent anything (monotonic)
        self.starts = 0  # API processes started (the first one included)
        self.deaths = 0  # of them, how many ended without being asked to
        self._why: str | None = None  # why the table's process ended the running one, if it did
        # Who asks: the token each request carries, looked up here (daemon.api.acts); and the
        # answers given to a request_id, kept here so that they outlive any one API process.
        self._people = People(config.api.tokens_file)
        self._answered = Answered()
        # The refusals at the API's doors, sent here as they happen (daemon.api.worker): counted
        # and journaled by the table's process, so an API process that dies loses none of them.
        self.refusals = RefusalLog(served.facade.journal_security, time.monotonic)
        # Set once the first API process serves (it said "ready"), or ended before it did.
        self.settled = asyncio.Event()
        # Refused actions (each a durable `table.violation`) a person may cause, counted here
        # too: an API process that is taken over skips its own count (`daemon.api.gate`).
        self.budget = RefusalBudget(time.monotonic)
        # The security facts it may have journaled, of each event name (it names the actor and
        # the role on its own word): past the budget, counted in `refusals`' summaries.
        self.facts = RefusalBudget(time.monotonic, limit=FACTS_PER_WINDOW)

    @classmethod
    def build(
        cls,
        served: Served,
        config: TableConfig,
        listen: str,
        *,
        feed: Any = None,
        **app_options: Any,
    ) -> ApiProcess:
        """On the table's running loop. The app is made here once, as the API process will make
        it, so what it refuses (a tokens file others may read, plain HTTP beyond loopback, a
        TLS key without its certificate) stops `tabled run` now, before anything is served."""
        user = api_user(config.api)  # as root: its own user, or a ValueError that says why
        journal = served.journal
        problem = journal_problem(user, journal.dir) if journal is not None else None
        if problem:
            raise ValueError(problem)
        # It reads older lines through the folder: shared with its group alone, read-only.
        shared = journal.share(user.gid) if user is not None and journal is not None else []
        if shared:
            log.warning("journal.shared", group=user.gid if user else None, changed=shared)
        served.publisher.publish_first()
        server = ApiServer(create_app(served.facade, config, **app_options), listen)
        return cls(served, config, listen, server, feed=feed, app_options=app_options, user=user)

    def url(self) -> str:
        return self.server.url()

    @property
    def pid(self) -> int | None:
        """The API process's pid now (None while none runs)."""
        process = self._process
        return process.pid if process is not None and process.returncode is None else None

    def start(self) -> None:
        self.server.bind()
        self.publisher.start()
        self.publisher.listen(self._published)
        self._forwarder = asyncio.ensure_future(self._forward_journal())
        self._supervisor = asyncio.ensure_future(self._supervise())

    async def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Ask the API process to end, kill it after `timeout`; the table's loop runs meanwhile
        (its last requests, the refusals' summary, are answered)."""
        self._stopping = True
        self._send(pickle_frame({"t": "stop"}))
        supervisor = self._supervisor
        if supervisor is not None and self._process is None:
            supervisor.cancel()  # waiting to start one again: nothing to stop
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await supervisor
        elif supervisor is not None:
            try:
                await asyncio.wait_for(asyncio.shield(supervisor), timeout)
            except TimeoutError:
                log.warning("api.stop_timeout", seconds=timeout, pid=self.pid)
                fact = {"returncode": None, "reason": "stop_timeout", "pid": self.pid}
                self._kill()
                with contextlib.suppress(Exception):
                    await self._table.journal_security("api.process_died", fact)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(supervisor, timeout)
            with contextlib.suppress(asyncio.CancelledError):
                supervisor.cancel()
        for task in (self._forwarder, *self._answering):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        with contextlib.suppress(Exception):
            await self.refusals.close()  # what is counted and not yet journaled
        await self.publisher.stop()
        with contextlib.suppress(OSError):
            self.server.listening().close()

    # ---- the API process, started again while the table runs -------------------------------

    async def _supervise(self) -> None:
        delay = RESTART_FIRST
        while not self._stopping:
            started = time.monotonic()
            try:
                returncode = await self._run_once()
            except Exception as exc:  # could not start it: as if it died at once
                log.error("api.process_failed", error=repr(exc))
                returncode = None
            self.settled.set()
            if self._stopping:
                return
            self.deaths += 1
            if time.monotonic() - started > STABLE:
                delay = RESTART_FIRST
            reason = self._why or ("exited" if returncode is not None else "not_started")
            fact = {
                "returncode": returncode,
                "reason": reason,
                "restart_in": delay,
                "deaths": self.deaths,
            }
            log.error("api.process_died", **fact)
            with contextlib.suppress(Exception):
                await self._table.journal_security("api.process_died", fact)
            await asyncio.sleep(delay)
            delay = min(delay * 2, RESTART_MAX)

    async def _run_once(self) -> int | None:
        """Start one API process and serve its requests until it ends: its return code."""
        self._why = None
        ours, theirs = socket.socketpair()
        listening = self.server.listening()
        journal = self._journal
        # The journal's folder, read-only: the API process reads older lines through it
        # (/proc/self/fd/N), whatever the folders above it let its user reach.
        folder = (
            os.open(journal.dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            if journal is not None
            else None
        )
        fds = (theirs.fileno(), listening.fileno(), *(() if folder is None else (folder,)))
        try:
            process = await asyncio.create_subprocess_exec(
                *as_user(self.user), sys.executable, "-m", "daemon.api.worker",
                "--channel", str(fds[0]), "--listen", str(fds[1]),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                pass_fds=fds,
            )  # fmt: skip
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
            if folder is not None:
                os.close(folder)
        self._process = process
        self.starts += 1
        reader, writer = await asyncio.open_unix_connection(sock=ours)
        writer.write(pickle_frame(self._init(folder)))
        self._writer = writer
        if self._stopping:
            writer.write(pickle_frame({"t": "stop"}))
        log.info("api.process_started", pid=process.pid)
        self._heard = time.monotonic() + START_GRACE - UNRESPONSIVE
        pinging = asyncio.ensure_future(self._ping(writer))
        watching = asyncio.ensure_future(self._watch_tokens(writer))
        try:
            await self._serve(reader, writer)
        except (ChannelError, OSError) as exc:  # broken framing, or the connection reset
            log.error("api.channel_broken", error=repr(exc), pid=process.pid)
            if isinstance(exc, ChannelError):  # a reset is its death, said by its return code
                self._why = self._why or "channel_broken"
        finally:
            pinging.cancel()
            watching.cancel()
            self._writer = None
            if not self._stopping:
                # It closed the channel or broke it: it is not serving (as it should) any more.
                try:
                    await asyncio.wait_for(process.wait(), STOP_TIMEOUT)
                except TimeoutError:
                    self._kill()
            writer.close()
        returncode = await process.wait()
        self._process = None
        return returncode

    async def _ping(self, writer: asyncio.StreamWriter) -> None:
        """Ping the API process; one that says nothing for `UNRESPONSIVE` seconds (its loop
        stuck, or the process stopped) is killed, and started again."""
        while self._writer is writer:
            await asyncio.sleep(PING_EVERY)
            silent = time.monotonic() - self._heard
            if silent > UNRESPONSIVE and not self._stopping:
                log.error("api.process_unresponsive", pid=self.pid, silent=round(silent, 1))
                self._why = "unresponsive"
                self._kill()
                return
            self._send(pickle_frame({"t": "ping"}))

    def _init(self, folder: int | None) -> dict[str, Any]:
        """The start-up facts a new API process is sent first; `folder`, the descriptor of the
        journal's folder it was handed."""
        journal = self._journal
        level = logging.getLevelName(logging.getLogger().getEffectiveLevel()).lower()
        self._tokens.reload()
        self._sent_tokens = self._tokens.entries()
        return {
            "t": "init",
            "config": config_for_api(self._config),
            "listen": self._listen,
            "actions": self._table.actions(),
            "published": self.publisher.latest,
            "wall_offset": self._wall() - time.time(),
            "journal_dir": None if folder is None else f"/proc/self/fd/{folder}",
            "durable_seq": journal.durable_seq if journal is not None else 0,
            "feed": self._feed is not None,
            "log_level": level if level in ("debug", "info", "warning") else "warning",
            "app_options": self._app_options,
            "tokens": self._sent_tokens,
            "tls": _tls_files(self._config),
        }

    async def _watch_tokens(self, writer: asyncio.StreamWriter) -> None:
        """The tokens file looked at every `TOKENS_EVERY` seconds (a `stat`); its people sent
        to the API process when it changed (a token given, withdrawn, a person's role)."""
        while self._writer is writer:
            await asyncio.sleep(TOKENS_EVERY)
            self._tokens.reload()
            entries = self._tokens.entries()
            if entries != self._sent_tokens:
                self._sent_tokens = entries
                self._send(pickle_frame({"t": "tokens", "tokens": entries}))

    def _kill(self) -> None:
        process = self._process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()

    def _send(self, data: bytes) -> None:
        """Hand `data` to the API process without waiting for it; one that lets too much wait
        unread is stuck, and is killed (then started again)."""
        writer = self._writer
        if writer is None or writer.is_closing():
            return
        writer.write(data)
        if writer.transport.get_write_buffer_size() > MAX_BUFFERED:
            log.error("api.process_stuck", pid=self.pid, buffered=MAX_BUFFERED)
            self._why = "stuck"
            self._writer = None
            self._kill()

    # ---- to the API process: the state, the journal ----------------------------------------

    def _published(self) -> None:
        self._send(
            pickle_frame(
                {
                    "t": "state",
                    "published": self.publisher.latest,
                    "wall_offset": self._wall() - time.time(),
                }
            )
        )

    async def _forward_journal(self) -> None:
        """The journal's durable lines, as they come, to whichever API process runs. One that
        missed some (started since, or this forwarder fell behind) reads them from the files."""
        journal = self._journal
        if journal is None:
            return
        subscription = journal.subscribe(FORWARD_QUEUE)
        while True:
            try:
                record = await subscription.next()
                lines = [record.line]
                while (more := subscription.get_nowait()) is not None:
                    lines.append(more.line)
            except SubscriberLagged:
                subscription = journal.subscribe(FORWARD_QUEUE)
                continue
            except JournalClosed:
                return
            self._send(frame(LINES, b"".join(lines)))


def _tls_files(config: TableConfig) -> tuple[bytes, bytes] | None:
    """The TLS certificate and key as bytes (checked at the start, `serving_problem`): the API
    process serves TLS with them without reading the key file, which may be root's alone."""
    cert, key = config.api.tls_cert, config.api.tls_key
    if cert is None or key is None:
        return None
    return cert.read_bytes(), key.read_bytes()


def config_for_api(config: TableConfig) -> TableConfig:
    """The table's config as its API process is sent it: without `[feed]`, whose broker password,
    token or credentials file would let a taken-over API process publish as the table (it only
    needs to know there is a feed, which `init["feed"]` says)."""
    return dataclasses.replace(config, feed=None)
