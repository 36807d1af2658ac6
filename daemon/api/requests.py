"""What the table's process takes from its API process (`daemon.api.process.ApiProcess`, whose
request half this is): the frames it sends over the channel, read on the table's loop.

The API process faces the network: the table's process reads nothing from it but plain data,
each field checked. Requests (an action, a security fact, a training control, a metrics scrape)
are JSON only, small (`MAX_FROM_API`), each answered once the table's loop has done it. An
action or a training control carries the token its caller presented: the table's process looks
the person up itself (`daemon.api.acts`), and keeps the answers to request_ids, so that a retry
to a new API process acts once. The refusals at the API's doors come as they happen and are
counted and journaled here (`refusals`). The security facts it asks to journal have a budget
(`facts`); past it they are counted into one `api.facts_over_budget` summary a minute.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
import time
from typing import Any

import structlog

from daemon.api.acts import REQUEST_ID, Answered, NotThePerson, People
from daemon.api.gate import (
    AUTH_REFUSED,
    FACTS_OVER_BUDGET,
    INPUT_REFUSED,
    NAMED,
    SHORT,
    RefusalBudget,
    RefusalLog,
)
from daemon.api.tokens import Principal, TokenStore
from daemon.contract.channel import (
    JSON,
    MAX_FROM_API,
    ChannelError,
    FrameRefused,
    json_body,
    pickle_frame,
    read_frame,
)
from daemon.contract.facade import OPERATOR_ROLES, Publisher, TableFacade, training_args
from daemon.contract.facade import ROLES as TABLE_ROLES
from daemon.tomltext import nested_deeper_than
from daemon.training import ROLES as TRAINING_ROLES

log = structlog.get_logger("tabled.api")

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


class Requests:
    """The request half of `ApiProcess`: the frames its API process sends, each checked, and
    what the table's loop answers them with."""

    _table: TableFacade
    publisher: Publisher
    refusals: RefusalLog
    budget: RefusalBudget
    facts: RefusalBudget
    settled: asyncio.Event
    _people: People
    _answered: Answered
    _tokens: TokenStore
    _sent_tokens: dict[str, Principal]
    _feed: Any
    _heard: float
    _why: str | None
    _writer: asyncio.StreamWriter | None
    _answering: set[asyncio.Task[None]]

    @property
    def pid(self) -> int | None:
        raise NotImplementedError

    def _kill(self) -> None:
        raise NotImplementedError

    def _send(self, data: bytes) -> None:
        raise NotImplementedError

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
            return await table.training(str(name), list(call_args), "")
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
        # The state it leads to goes before the answer, once all it shows is durable.
        await self.publisher.publish_durable()
        return answer

    def _who(
        self, op: str, token: Any, roles: tuple[str, ...], actor: str | None, role: str | None
    ) -> None:
        """The request's token names a person of `roles`: `actor` in `role` when it says so."""
        try:
            self._people.who(token, roles, actor, role)
        except NotThePerson as exc:
            raise RequestRefused(f"{op}: {exc}") from None


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
