"""The API's gate: who is calling (token -> person), the bad-token budgets, and the journal's
record of what was refused at the door. `Who` is the FastAPI dependency that names the caller;
the push feed calls `Gate.authenticate` with its first message's token.

A refused request is a fact surveillance must see, but not one durable journal line each: a
flood of bad tokens or garbage bodies would otherwise fill the table PC's disk with commits.
`RefusalLog` journals the first refusal of a quiet spell at once (so a single guess is on record
before its 401 is sent), then one summary line per `interval` while refusals keep coming: how
many, why, from which clients, which token fingerprints (never a token) and which clients were
locked out. A spell ends when an interval passes with no refusal.

    api.auth_refused   bad tokens, lockouts, requests refused while locked out
    api.input_refused  requests refused before the API looked at them: a Host or Origin not
                       this table's, a body that is not JSON, unknown fields, unknown paths;
                       and a person's actions refused while their refusal budget is spent
    api.facts_over_budget  the security facts (`api.forbidden`, ...) an API process in a process
                       of its own asked the table's process to journal past their budget
                       (`FACTS_PER_WINDOW` of each in `BUDGET_WINDOW` seconds, counted in the
                       table's process, daemon.api.process): by event, with the actors they
                       named and their actions. An API process that is taken over can then
                       write `FACTS_PER_WINDOW` lines a minute of each fact and one summary,
                       not 9,700 in 10 s.

What the regulation forbids is another matter: an authenticated person's action the table
refuses (a cut of 9 cards, a bet on the banker's seat) is a `table.violation` with its article,
one durable line each, whichever layer catches it (`daemon.api.routes.act`). A person looping
on refused actions could fill the disk that way, so each person has a budget of refused actions
(`RefusalBudget`: `PER_PERSON` in `BUDGET_WINDOW` seconds); once it is spent, that person's
actions are answered 429 without reaching the table and are counted in the summaries above
until the window has passed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Annotated, Any

import structlog
from fastapi import Depends, Request
from fastapi.security import HTTPBearer
from starlette.requests import HTTPConnection

from daemon.api.errors import ApiError
from daemon.api.ratelimit import AuthFailureLimiter
from daemon.api.tokens import Principal, TokenStore, fingerprint, hash_token

log = structlog.get_logger("tabled.api")

Journal = Callable[[str, dict[str, Any]], Awaitable[None]]

AUTH_REFUSED = "api.auth_refused"
INPUT_REFUSED = "api.input_refused"
FACTS_OVER_BUDGET = "api.facts_over_budget"
# What each kind's summary names beside its reasons and clients.
DETAILS = {AUTH_REFUSED: "fingerprints", INPUT_REFUSED: "paths", FACTS_OVER_BUDGET: "actions"}
SUMMARY_INTERVAL = 60.0
# How many distinct clients, fingerprints or paths a summary names (the rest are counted).
NAMED = 20
# How many distinct keys a tally remembers between summaries, so a flood of distinct clients or
# paths cannot grow memory without bound.
REMEMBERED = 1000
# Characters of a client, a path or a token's fingerprint as a refusal is noted (paths are cut to
# 100): what the API process sends the table's process of one (daemon.api.worker).
SHORT = 128


@dataclass
class _Tally:
    count: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    clients: Counter[str] = field(default_factory=Counter)
    details: Counter[str] = field(default_factory=Counter)
    locked: list[str] = field(default_factory=list)
    on_guard: bool = False
    due: float | None = None  # when the open spell's next summary is due; None: quiet

    def add(self, reason: str, client: str, detail: str | None) -> None:
        self.count += 1
        self.reasons[reason] += 1
        _bounded_add(self.clients, client)
        if detail is not None:
            _bounded_add(self.details, detail)

    def summary(self, detail_name: str, interval: float) -> dict[str, Any]:
        out: dict[str, Any] = {
            "refused": self.count,
            "interval_s": interval,
            "by_reason": dict(sorted(self.reasons.items())),
            "clients": dict(self.clients.most_common(NAMED)),
            "distinct_clients": len(self.clients),
            detail_name: dict(self.details.most_common(NAMED)),
        }
        if self.locked:
            out["locked_out"] = sorted(set(self.locked))[:NAMED]
        if self.on_guard:
            out["global_budget_spent"] = True
        return out

    def clear(self) -> None:
        self.count = 0
        self.reasons.clear()
        self.clients.clear()
        self.details.clear()
        self.locked.clear()
        self.on_guard = False


def _bounded_add(counter: Counter[str], key: str) -> None:
    if key in counter or len(counter) < REMEMBERED:
        counter[key] += 1
    else:
        counter["(others)"] += 1


class RefusalLog:
    """Refusals journaled as rate-limited summaries (module docstring)."""

    def __init__(
        self,
        journal: Journal,
        clock: Callable[[], float],
        *,
        interval: float = SUMMARY_INTERVAL,
    ) -> None:
        self.journal, self.clock, self.interval = journal, clock, interval
        self._tallies = {event: _Tally() for event in DETAILS}
        self._details = DETAILS
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False
        self._tasks: set[asyncio.Task[None]] = set()

    async def auth(
        self,
        reason: str,
        client: str,
        token: str | None = None,
        locked: Sequence[str] = (),
        *,
        on_guard: bool = False,
    ) -> None:
        """A token refused (`bad_token`) or a request refused while locked out; `locked` are
        the clients this refusal locked out, `on_guard` whether the global budget is spent."""
        await self.noted(
            AUTH_REFUSED,
            reason,
            client,
            None if token is None else fingerprint(token),
            locked,
            on_guard=on_guard,
        )

    async def input(self, reason: str, client: str, path: str) -> None:
        """A request refused for its form: Host, Origin, body, fields, path."""
        await self.noted(INPUT_REFUSED, reason, client, path[:100])

    async def noted(  # noqa: PLR0917 - one refusal, as `auth` and `input` say it
        self,
        event: str,
        reason: str,
        client: str,
        detail: str | None,
        locked: Sequence[str] = (),
        on_guard: bool = False,
    ) -> None:
        """One refusal of `event`'s kind, its detail (a token's fingerprint, a path) made."""
        tally = self._tallies[event]
        tally.locked.extend(locked)
        tally.on_guard = tally.on_guard or on_guard
        await self._note(event, reason, client, detail)

    async def _note(self, event: str, reason: str, client: str, detail: str | None) -> None:
        tally = self._tallies[event]
        tally.add(reason, client, detail)
        now = self.clock()
        if tally.due is None:
            # The first refusal of a quiet spell: on record before the answer is sent.
            tally.due = now + self.interval
            await self._flush(event)
            self._arm()
        elif now >= tally.due:
            await self.flush_due()

    async def flush_due(self) -> None:
        """Journal each spell's summary whose interval has passed; end the spells that saw no
        refusal in their last interval."""
        now = self.clock()
        for event, tally in self._tallies.items():
            if tally.due is None or now < tally.due:
                continue
            if tally.count:
                tally.due = now + self.interval
                await self._flush(event)
            else:
                tally.due = None
        self._arm()

    async def close(self) -> None:
        """Journal whatever is counted and not yet on record (the daemon is stopping)."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for event, tally in self._tallies.items():
            if tally.count:
                await self._flush(event)
            tally.due = None

    async def _flush(self, event: str) -> None:
        tally = self._tallies[event]
        payload = tally.summary(self._details[event], self.interval)
        tally.clear()
        log.warning(event, **payload)
        try:
            await self.journal(event, payload)
        except Exception as exc:
            # The journal is failing (the table says so on its own); the refusal is still
            # answered, and its summary stays in the operational log above.
            log.error("api.refusals_not_journaled", event=event, error=repr(exc))

    def _arm(self) -> None:
        """A real-time timer, so that the last summary of a spell is journaled even when no
        further refusal comes to trigger it."""
        if self._closed or self._timer is not None:
            return
        if all(t.due is None for t in self._tallies.values()):
            return
        loop = asyncio.get_running_loop()

        def fire() -> None:
            self._timer = None
            task = loop.create_task(self._tick())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        self._timer = loop.call_later(self.interval, fire)

    async def _tick(self) -> None:
        # On the real clock the interval has passed; on a test's manual clock it may not have,
        # and then only the next refusal (or close) writes the summary.
        with contextlib.suppress(Exception):
            await self.flush_due()


PER_PERSON = 30
BUDGET_WINDOW = 60.0
FACTS_PER_WINDOW = 30  # lines of one security fact an API process may have journaled a window


class RefusalBudget:
    """How many durable lines one key may cause in a sliding window: a person's refused
    actions (each a `table.violation`; the persons are those of the tokens file), or the API
    process's security facts of one event name (daemon.api.process), so the map stays small."""

    def __init__(
        self, clock: Callable[[], float], *, limit: int = PER_PERSON, window: float = BUDGET_WINDOW
    ) -> None:
        self.clock, self.limit, self.window = clock, limit, window
        self._refused: dict[str, deque[float]] = {}

    def _recent(self, person: str) -> deque[float]:
        times = self._refused.setdefault(person, deque())
        horizon = self.clock() - self.window
        while times and times[0] <= horizon:
            times.popleft()
        return times

    def retry_after(self, person: str) -> float:
        """Seconds until `person` may act again; 0 while the budget is not spent."""
        times = self._recent(person)
        if len(times) < self.limit:
            return 0.0
        return max(times[0] + self.window - self.clock(), 0.0)

    def spend(self, person: str) -> None:
        """One line of `person`'s (a refused action, a fact) was journaled."""
        self._recent(person).append(self.clock())


class Gate:
    """Token checks, the bad-token budgets and the record of refusals for one app."""

    def __init__(
        self,
        tokens: TokenStore,
        limiter: AuthFailureLimiter,
        refusals: RefusalLog,
        budget: RefusalBudget | None = None,
    ) -> None:
        self.tokens, self.limiter, self.refusals = tokens, limiter, refusals
        self.budget = budget or RefusalBudget(refusals.clock)
        # What was refused, by reason, since start: `tabled_api_refused_total{reason}`.
        self.refused: Counter[str] = Counter()

    async def authenticate(self, token: str | None, client: str) -> Principal:
        # A console signed in from this client before it was locked out goes on being served
        # (daemon.api.ratelimit); a guess made during the lockout is not looked up.
        digest = hash_token(token) if token else None
        wait = self.limiter.retry_after(client, digest)
        if wait > 0 and token:
            self.refused["rate_limited"] += 1
            await self.refusals.auth("rate_limited", client, on_guard=self.limiter.on_guard())
            raise ApiError(
                429,
                "rate_limited",
                f"too many bad tokens from {client}; try again in {int(wait) + 1} s",
                {"Retry-After": str(int(wait) + 1)},
            )
        if not token:
            self.refused["no_token"] += 1
            raise ApiError(
                401,
                "unauthorized",
                "no token: send `Authorization: Bearer TOKEN`",
                {"WWW-Authenticate": "Bearer"},
            )
        principal = self.tokens.lookup(token)
        if principal is None:
            await self.tokens.refresh()
            principal = self.tokens.lookup(token)
        if principal is not None:
            if digest is not None:
                self.limiter.accepted(client, digest)
            return principal
        self.refused["bad_token"] += 1
        locked = self.limiter.failed(client)
        if locked:
            log.warning(
                "api.auth_locked_out",
                clients=locked[:NAMED],
                lockout_s=self.limiter.lockout,
                on_guard=self.limiter.on_guard(),
            )
        await self.refusals.auth(
            "bad_token", client, token, locked, on_guard=self.limiter.on_guard()
        )
        raise ApiError(401, "unauthorized", "token not recognised", {"WWW-Authenticate": "Bearer"})


_bearer = HTTPBearer(auto_error=False, description="a person's API token")


async def _principal(request: Request, _: Annotated[Any, Depends(_bearer)]) -> Principal:
    return await principal(request)


# The token the request being served was authenticated with (`principal` sets it): what the API
# process sends with a security fact that names its caller (`api.forbidden`), so that the table's
# process checks the name against the token instead of taking it on the API process's word
# (daemon.api.worker, daemon.api.process). Never journaled, never sent anywhere else.
CALLER: ContextVar[str | None] = ContextVar("tabled_api_caller", default=None)


async def principal(request: Request) -> Principal:
    """The caller named by the request's `Authorization: Bearer TOKEN` (`Who`, without
    FastAPI's dependency machinery, for a route that is read many times a second)."""
    header = request.headers.get("authorization", "")
    scheme, _sep, token = header.partition(" ")
    if header and scheme.lower() != "bearer":
        raise ApiError(401, "unauthorized", "use `Authorization: Bearer TOKEN`")
    client = request.client.host if request.client else "unknown"
    gate: Gate = request.app.state.gate
    who = await gate.authenticate(token.strip() or None, client)
    CALLER.set(token.strip())
    return who


def credential(request: HTTPConnection) -> str:
    """The bearer token a request presented (`principal` named its caller by it): what the
    table's process, when the API is served from a process of its own, looks up itself."""
    return request.headers.get("authorization", "").partition(" ")[2].strip()


Who = Annotated[Principal, Depends(_principal)]
