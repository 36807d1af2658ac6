"""`tabled run --http`: the operator API in a process of its own (`daemon.api.worker`).

    api = ApiProcess.build(table, config, listen, feed=shipper)  # on the table's loop
    url = api.url()          # bound now: a taken port fails the start
    api.start()              # the API process starts; the table goes on meanwhile
    ...
    await api.stop()         # before the table stops: the API's last journal lines go in

The table's process keeps the devices, the procedure and the journal; it never runs API code,
and no API work competes with the table's loop for the interpreter (an API on a thread of the
same process did: at 200 state reads a second and fifty consoles the table lost a quarter of
its rounds on a quiet machine, bench/bench_api_load.py). Across the channel
(`daemon.api.channel`, an anonymous socket pair):

- to the API process: the start-up facts (config, actions, the journal's folder and durable
  seq), each publication of the table's state (`SnapshotPublisher`, as for the thread), and the
  journal's durable lines as they are on disk (one subscription, forwarded as they come);
- from it: requests (an action, a security fact, a training control, a metrics scrape), JSON
  only, small (`MAX_FROM_API`) and checked field by field, each answered once the table's loop
  has done it. An action or a training control carries the token its caller presented: the
  table's process looks the person up itself (`daemon.api.acts`), and keeps the answers to
  request_ids, so that a retry to a new API process acts once. The refusals at the API's doors
  come as they happen and are counted and journaled here (`refusals`). The security facts it
  asks to journal (`api.forbidden`, named actor and all, on its word) have a budget here
  (`facts`: `FACTS_PER_WINDOW` lines of each a minute); past it they are counted into one
  `api.facts_over_budget` summary a minute, so a taken-over API process cannot fill the disk.

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
import functools
import json
import logging
import os
import re
import socket
import sys
import time
from typing import TYPE_CHECKING, Any

import structlog

from daemon.api.acts import REQUEST_ID, Answered, NotThePerson, People
from daemon.api.app import create_app
from daemon.api.bridge import SnapshotPublisher, TableBridge, training_args, training_call
from daemon.api.channel import (
    JSON,
    LINES,
    MAX_FROM_API,
    ChannelError,
    FrameRefused,
    frame,
    json_body,
    pickle_frame,
    read_frame,
)
from daemon.api.facade import ROLES as TABLE_ROLES
from daemon.api.gate import (
    AUTH_REFUSED,
    FACTS_OVER_BUDGET,
    FACTS_PER_WINDOW,
    INPUT_REFUSED,
    NAMED,
    SHORT,
    RefusalBudget,
    RefusalLog,
)
from daemon.api.server import ApiServer
from daemon.api.tokens import Principal, TokenStore
from daemon.api.user import ApiUser, api_user, as_user, journal_problem
from daemon.journal import JournalClosed, SubscriberLagged
from daemon.table.facade import OPERATOR_ROLES
from daemon.tomltext import nested_deeper_than

if TYPE_CHECKING:
    from daemon.config import TableConfig
    from daemon.table.runtime import Table

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
# What the API process may ask the table for, each field checked: it faces the network, so a
# request outside these is a compromised or broken API process. Such a request is refused,
# journaled (`api.channel_refused`) and the process is killed and started again (with the
# restart's back-off, so a flood of them costs the journal one line a start).
# An action's actor as the tokens file names people (no ":", which joins a role to an actor).
ACTOR = re.compile(r"^[A-Za-z0-9._@-]{1,64}$")
ACTION = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
# The security facts the API journals (routes/act.py, routes/training.py, server.py): no other
# name, and never the table's own (`api.process_died`).
# The refusals at its doors (`api.auth_refused`, `api.input_refused`) the API process does not
# journal itself: it sends each of them (`_refusal`), and the table's process journals them.
SECURITY_EVENTS = frozenset({"api.forbidden", "api.plain_http_behind_proxy"})
# Of them, those that name the person who asked (`actor`, `role`): sent with that person's token.
NAMES_ITS_CALLER = frozenset({"api.forbidden"})
MAX_FACT_BYTES = 4 << 10  # a security fact's payload, as JSON (the API's are under 1 KiB)
MAX_FACT_DEPTH = 6  # objects and lists within a security fact's payload
REFUSAL_FIELDS = 7  # a refusal's frame: t, event, reason, client, detail, locked, on_guard
REASON = re.compile(r"^[a-z_]{1,32}$")  # why the doors refused (`bad_token`, `not_found`, ...)
MAX_IN_FLIGHT = 256  # requests of the API process the table has not answered yet
YIELD_AFTER = 16 << 10  # bytes of frames parsed back to back before the table's loop runs others


class ApiProcess:
    """The API server of one table, served from a process of its own."""

    def __init__(
        self,
        table: Table,
        config: TableConfig,
        listen: str,
        server: ApiServer,
        publisher: SnapshotPublisher,
        *,
        feed: Any = None,
        app_options: dict[str, Any] | None = None,
        user: ApiUser | None = None,
    ) -> None:
        self._table, self._config, self._listen = table, config, listen
        # Who the API process runs as (daemon.api.user): None, the daemon's own user.
        self.user = user
        # The tokens file as the table's process reads it for the API process, which may not:
        # its people are sent at the start and again whenever the file changes.
        self._tokens = TokenStore(config.api.tokens_file)
        self._sent_tokens: dict[str, Principal] = {}
        self.server, self.publisher, self._feed = server, publisher, feed
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
        self.refusals = RefusalLog(table.journal_security, time.monotonic)
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
        table: Table,
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
        journal = table.journal
        problem = journal_problem(user, journal.dir) if journal is not None else None
        if problem:
            raise ValueError(problem)
        # It reads older lines through the folder: shared with its group alone, read-only.
        shared = journal.share(user.gid) if user is not None and journal is not None else []
        if shared:
            log.warning("journal.shared", group=user.gid if user else None, changed=shared)
        publisher = SnapshotPublisher(table)
        publisher.publish_first()
        bridge = TableBridge(table, asyncio.get_running_loop(), publisher)
        server = ApiServer(create_app(bridge, config, **app_options), listen)
        return cls(
            table, config, listen, server, publisher, feed=feed, app_options=app_options, user=user
        )

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
        journal = self._table.journal
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
        journal = self._table.journal
        level = logging.getLevelName(logging.getLogger().getEffectiveLevel()).lower()
        self._tokens.reload()
        self._sent_tokens = self._tokens.entries()
        return {
            "t": "init",
            "config": config_for_api(self._config),
            "listen": self._listen,
            "actions": self._table.actions(),
            "published": self.publisher.latest,
            "wall_offset": self._table._wall() - time.time(),
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
                    "wall_offset": self._table._wall() - time.time(),
                }
            )
        )

    async def _forward_journal(self) -> None:
        """The journal's durable lines, as they come, to whichever API process runs. One that
        missed some (started since, or this forwarder fell behind) reads them from the files."""
        journal = self._table.journal
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

    # ---- from the API process: requests ----------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        parsed = 0  # bytes parsed since the table's loop last ran its other work
        # This API process's requests not answered yet (a dead one's, still being taken, do not
        # count against the next one).
        answering: set[asyncio.Task[None]] = set()
        while True:
            try:
                got = await read_frame(reader, MAX_FROM_API)
                if got is None:
                    return
                self._heard = time.monotonic()
                kind, body = got
                if kind != JSON:
                    raise FrameRefused("the API process may send JSON only")
                message = json_body(body)
            except FrameRefused as exc:  # refused by its header, or by its parse
                await self._refused("frame", str(exc))
                raise
            parsed += len(body)
            if parsed >= YIELD_AFTER:
                # Frames waiting in the buffer are read without a pause: the loop's other work
                # (a device's frame, a timer) goes between them.
                parsed = 0
                await asyncio.sleep(0)
            t = message.get("t")
            if t in ("ready", "bye", "pong"):
                if len(message) != 1:
                    await self._refused(str(t), "a word of the channel with more than its word")
                    raise ChannelError(f"{t} with more")
                if t == "ready":
                    self.settled.set()
                continue
            if t == "refused":
                await self._refusal(message)
                continue
            if t != "call" or not isinstance(message.get("id"), int):
                raise ChannelError(f"not a request: {str(message)[:200]}")
            if len(answering) >= MAX_IN_FLIGHT:
                # Each request holds memory on the table's loop until answered: an API process
                # that piles them up is flooding the table, not serving consoles.
                problem = f"more than {MAX_IN_FLIGHT} requests waiting for an answer"
                await self._refused(str(message.get("op")), problem)
                raise ChannelError(problem)
            task = asyncio.ensure_future(self._answer(message, writer))
            self._answering.add(task)
            task.add_done_callback(self._answering.discard)
            answering.add(task)
            task.add_done_callback(answering.discard)

    async def _refusal(self, message: dict[str, Any]) -> None:
        """A refusal at the API's doors (`ForwardedRefusals`), counted into `refusals`."""
        event, reason, client, detail, locked, on_guard = (
            message.get(k) for k in ("event", "reason", "client", "detail", "locked", "on_guard")
        )
        if not (
            len(message) == REFUSAL_FIELDS
            and event in (AUTH_REFUSED, INPUT_REFUSED)
            and isinstance(reason, str)
            and REASON.match(reason)
            and _short(client)
            and (detail is None or _short(detail))
            and isinstance(locked, list)
            and len(locked) <= NAMED
            and all(_short(c) for c in locked)
            and isinstance(on_guard, bool)
        ):
            await self._refused("refused", "a refusal as the API's doors note one")
            raise ChannelError("a refusal as the API's doors note one")
        await self.refusals.noted(event, reason, str(client), detail, locked, on_guard)

    async def _answer(self, message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        reply: dict[str, Any] = {"t": "reply", "id": message["id"]}
        try:
            reply["value"] = await self._call(str(message.get("op")), message.get("args"))
        except Exception as exc:
            reply["error"] = exc
        try:
            data = pickle_frame(reply)
        except Exception as exc:  # an exception that does not pickle: said in words
            data = pickle_frame(
                {"t": "reply", "id": message["id"], "error": RuntimeError(repr(exc))}
            )
        if self._writer is writer:
            self._send(data)

    async def _call(self, op: str, args: Any) -> Any:
        """One request of the API process, its every field checked (it faces the network). A
        request it may not make is refused, journaled, and the API process replaced."""
        try:
            return await self._checked_call(op, args)
        except RequestRefused as exc:
            await self._refused(op, str(exc))
            raise

    async def _refused(self, op: str, problem: str) -> None:
        fact = {"op": op[:64], "problem": problem[:200], "pid": self.pid}
        log.error("api.channel_refused", **fact)
        with contextlib.suppress(Exception):
            await self._table.journal_security("api.channel_refused", fact)
        self._why = "refused_request"
        self._kill()

    async def _checked_call(self, op: str, args: Any) -> Any:
        if not isinstance(args, dict):
            raise RequestRefused("a request's args are an object")
        table = self._table
        if op == "act":
            action, actor, role, payload, request_id = (
                args.get(k) for k in ("action", "actor", "role", "payload", "request_id")
            )
            if not (isinstance(action, str) and isinstance(actor, str) and isinstance(role, str)):
                raise RequestRefused("act: action, actor and role are strings")
            if role not in OPERATOR_ROLES:
                # Devices and the system feed the table themselves: no token holds their roles.
                raise RequestRefused(f"act: a person acts as {' or '.join(OPERATOR_ROLES)}")
            if not (ACTION.match(action) and ACTOR.match(actor)):
                raise RequestRefused("act: an action's and an actor's name")
            if not isinstance(payload, dict):
                raise RequestRefused("act: the payload is an object")
            if request_id is not None and not (
                isinstance(request_id, str) and REQUEST_ID.match(request_id)
            ):
                raise RequestRefused("act: a request_id as the API takes it")
            self._who("act", args.get("token"), OPERATOR_ROLES, actor, role)
            wait = self.budget.retry_after(actor)
            if wait > 0:
                # Not taken, not journaled but in the refusals' summary.
                await self.refusals.input("refusal_budget", actor, f"/api/actions/{action}")
                return {"accepted": False, "refusal_budget": True, "retry_after": wait}
            act = functools.partial(self._act, action, actor, role, payload)
            return await self._answered.once(actor, request_id, action, payload, act)
        if op == "journal_security":
            event, payload = args.get("event"), args.get("payload")
            if event not in SECURITY_EVENTS:
                raise RequestRefused("journal_security: one of the API's api.* events")
            if not isinstance(payload, dict):
                raise RequestRefused("journal_security: the payload is an object")
            if not _small(payload):
                raise RequestRefused(
                    f"journal_security: a payload of at most {MAX_FACT_BYTES} bytes and "
                    f"{MAX_FACT_DEPTH} levels"
                )
            if event in NAMES_ITS_CALLER:
                # The person it names is the one whose token the request carried, as the
                # table's process reads the tokens file: not a name of the API process's.
                actor, role = payload.get("actor"), payload.get("role")
                if not (isinstance(actor, str) and isinstance(role, str)):
                    raise RequestRefused(f"journal_security: {event} names an actor and a role")
                self._who("journal_security", args.get("token"), TABLE_ROLES, actor, role)
            await self._fact(event, payload)
            return None
        if op == "tokens":
            # A token the API process does not know: the file looked at now, not at the next
            # poll. Its people are sent once, here, rather than again by the poll.
            self._tokens.reload()
            self._sent_tokens = self._tokens.entries()
            return self._sent_tokens
        if op == "metrics":
            return table.metrics()
        if op == "feed_status":
            return self._feed.status() if self._feed is not None else None
        if op == "training":
            from daemon.training import ROLES as TRAINING_ROLES  # noqa: PLC0415 - training only

            name = args.get("name")
            call_args: Any = args.get("args")
            # A control only as someone who may train (the route checked it; so does this).
            if not training_args(name, call_args) or (
                name == "control" and call_args[2] not in TRAINING_ROLES
            ):
                raise RequestRefused(f"training: no control {str(name)[:64]} with these arguments")
            # A control as the person the token names; what the simulated devices hold
            # (describe) for whoever may train.
            actor, role = (call_args[1], call_args[2]) if name == "control" else (None, None)
            self._who("training", args.get("token"), TRAINING_ROLES, actor, role)
            return await training_call(table, str(name), list(call_args))
        raise RequestRefused(f"no such request: {op[:64]}")

    async def _fact(self, event: str, payload: dict[str, Any]) -> None:
        """A security fact of the API process's journaled while its event's budget lasts, then
        counted into one summary line a minute (`api.facts_over_budget`, daemon.api.gate)."""
        if self.facts.retry_after(event) > 0:
            named, action = payload.get("actor"), payload.get("action")
            await self.refusals.noted(
                FACTS_OVER_BUDGET,
                event,
                named[:SHORT] if isinstance(named, str) else "(none)",
                action[:SHORT] if isinstance(action, str) else None,
            )
            return
        self.facts.spend(event)
        await self._table.journal_security(event, payload)

    async def _act(
        self, action: str, actor: str, role: str, payload: dict[str, Any]
    ) -> dict[str, Any]:
        answer = await self._table.act(action, actor, role, payload)
        if not answer.get("accepted"):
            self.budget.spend(actor)
        self.publisher.publish()  # the state it leads to goes before the answer
        return answer

    def _who(
        self, op: str, token: Any, roles: tuple[str, ...], actor: str | None, role: str | None
    ) -> None:
        """The request's token names a person of `roles`: `actor` in `role` when it says so."""
        try:
            self._people.who(token, roles, actor, role)
        except NotThePerson as exc:
            raise RequestRefused(f"{op}: {exc}") from None


def _tls_files(config: TableConfig) -> tuple[bytes, bytes] | None:
    """The TLS certificate and key as bytes (checked at the start, `serving_problem`): the API
    process serves TLS with them without reading the key file, which may be root's alone."""
    cert, key = config.api.tls_cert, config.api.tls_key
    if cert is None or key is None:
        return None
    return cert.read_bytes(), key.read_bytes()


class RequestRefused(ValueError):
    """A request the API process may not make (daemon.api.process's checks)."""


def _short(value: Any) -> bool:
    """A client, a path or a token's fingerprint as the doors note them (at most 128)."""
    return isinstance(value, str) and len(value) <= SHORT


def _small(payload: dict[str, Any]) -> bool:
    """A security fact's payload within `MAX_FACT_DEPTH` levels and `MAX_FACT_BYTES`."""
    if nested_deeper_than(payload, MAX_FACT_DEPTH):
        return False
    try:
        return len(json.dumps(payload, allow_nan=False)) <= MAX_FACT_BYTES
    except (TypeError, ValueError):
        return False


def config_for_api(config: TableConfig) -> TableConfig:
    """The table's config as its API process is sent it: without `[feed]`, whose broker password,
    token or credentials file would let a taken-over API process publish as the table (it only
    needs to know there is a feed, which `init["feed"]` says)."""
    return dataclasses.replace(config, feed=None)
