"""What the table's process needs to take a person's request from its API process
(`daemon.api.process`) without believing the API process's word for who asks, or for whether
the request was answered already.

- **Who asks** (`People`): the API process sends, with each action and training control, the
  token its caller presented (the bearer token itself, never its hash: the tokens file holds
  the hashes and the API process can read the file). The table's process looks the token up in
  its own reading of the tokens file and takes the person and role from there; a token that
  names no one, or names another person or role than the request does, is a request the API
  process may not make. An API process that is taken over can then act only as the people whose
  tokens it holds: those who sign in through it while it is taken over.
- **Asked already** (`Answered`): a request sent again with the same `request_id` by the same
  person (a console retrying after a lost answer, perhaps to a new API process after the old one
  died) gets the first answer and acts once, however many API processes come and go. The table's
  process keeps the last `PER_PERSON` of each person's (another person's requests never push
  them out); a retry that comes while the first is still being taken waits for its answer at
  most `RETRY_WAIT` seconds, then is answered that the first is in progress.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection
from pathlib import Path
from typing import Any

from daemon.api.tokens import Principal, TokenStore, hash_token

PER_PERSON = 64  # answers to one person's requests with a request_id the table's process keeps
PERSONS = 256  # people whose answers it keeps (the last to ask)
RETRY_WAIT = 10.0  # seconds a retry waits for the first asking's answer, then: in progress
REQUEST_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # as the API takes it (daemon.api.bodies)
MAX_TOKEN = 512  # characters of a token (`tabled token` makes 43)
TOKEN = re.compile(rf"^[A-Za-z0-9_-]{{1,{MAX_TOKEN}}}$")  # as `tabled token` makes them (base64url)
FRESH = 1.0  # seconds the table's process takes its reading of the tokens file as current


class NotThePerson(ValueError):
    """The request's token does not name the person (and role) the request says it does."""


class People:
    """The tokens file as the table's process reads it: its own reading, made at the first
    request that needs it, looked at again (a `stat`) when a token is not found or names
    another person, and at most `FRESH` seconds after the last look (a token withdrawn is
    refused by the API process at once, and by the table's process within `FRESH`)."""

    def __init__(self, path: Path | None) -> None:
        self._path = path
        self._store: TokenStore | None = None
        self._read = 0.0  # when the file was last looked at (monotonic)

    def who(
        self, token: Any, roles: Collection[str], actor: str | None, role: str | None
    ) -> Principal:
        """The person `token` names, whose role is one of `roles`, and who must be `actor` in
        `role` (None: whoever it names)."""
        if not isinstance(token, str) or not token:
            raise NotThePerson("no token (the one its caller presented)")
        if TOKEN.fullmatch(token) is None:
            # Hashed, a lone surrogate (which JSON may carry) would raise: not refused, nor
            # journaled, as a request the API process may not make is.
            raise NotThePerson(f"a token of other than 1 to {MAX_TOKEN} of A-Z a-z 0-9 _ -")
        store = self._store
        if store is None:
            store = self._store = TokenStore(self._path)
        digest = hash_token(token)
        holder = store.holder(digest)
        now = time.monotonic()
        if holder is None or not _names(holder, actor, role) or now - self._read > FRESH:
            # A token given, withdrawn or changed since the file was last read: read it again
            # (if it changed) and look again. The API process has read it for this request.
            store.reload()
            self._read = now
            holder = store.holder(digest)
        if holder is None:
            raise NotThePerson("a token the tokens file does not hold")
        if not _names(holder, actor, role):
            raise NotThePerson(
                f"the token is {holder.actor}'s ({holder.role}), not "
                f"{(actor or holder.actor)[:64]}'s ({(role or holder.role)[:16]})"
            )
        if holder.role not in roles:
            raise NotThePerson(f"the token is {holder.actor}'s, a {holder.role}: not for this")
        return holder


def _names(holder: Principal, actor: str | None, role: str | None) -> bool:
    return (actor is None or holder.actor == actor) and (role is None or holder.role == role)


class Answered:
    """The answers given to requests with a `request_id` (module docstring): the last
    `per_person` of each person, for the last `persons` people who asked (one person's requests
    never push another's out). A retry that comes while the first is still being taken waits
    for its answer at most `wait` seconds, then is told it is in progress (`in_progress`)."""

    def __init__(
        self, per_person: int = PER_PERSON, persons: int = PERSONS, wait: float = RETRY_WAIT
    ) -> None:
        self.per_person, self.persons, self.wait = per_person, persons, wait
        self._answers: OrderedDict[
            str, OrderedDict[str, tuple[str, bytes, asyncio.Future[Any]]]
        ] = OrderedDict()

    async def once(
        self,
        actor: str,
        request_id: str | None,
        action: str,
        payload: dict[str, Any],
        act: Callable[[], Awaitable[dict[str, Any]]],
    ) -> dict[str, Any]:
        """`act()`'s answer, or the first answer to `request_id` from `actor` (with `replayed`),
        or `request_id_reused` (and the first request's action) when it asked something else,
        or `in_progress` when the first is not answered within `wait`."""
        if request_id is None:
            return await act()
        # What was asked, to tell a retry from another request: a payload's fields are plain
        # values or lists of them (the game's declaration), so its sorted items say it all; kept
        # as a digest (a payload may be 16 KiB, the digest is 16 bytes).
        asked = hashlib.blake2b(repr(sorted(payload.items())).encode(), digest_size=16).digest()
        mine = self._answers.get(actor)
        if mine is None:
            mine = self._answers[actor] = OrderedDict()
            while len(self._answers) > self.persons:
                self._answers.popitem(last=False)
        else:
            self._answers.move_to_end(actor)
        kept = mine.get(request_id)
        if kept is not None:
            first_action, first_asked, answer = kept
            if (first_action, first_asked) != (action, asked):
                return {"accepted": False, "request_id_reused": True, "action": first_action}
            try:
                first = await asyncio.wait_for(asyncio.shield(answer), self.wait)
            except TimeoutError:
                return {"accepted": False, "in_progress": True, "action": first_action}
            return {**first, "replayed": True}
        answer = asyncio.get_running_loop().create_future()
        mine[request_id] = (action, asked, answer)
        while len(mine) > self.per_person:
            mine.popitem(last=False)
        try:
            outcome = await act()
        except BaseException as exc:
            # Not answered: a retry asks the table again.
            if mine.get(request_id, (None, None, None))[2] is answer:
                del mine[request_id]
            answer.set_exception(exc if isinstance(exc, Exception) else RuntimeError(repr(exc)))
            answer.exception()  # retrieved: a retry waiting on it gets it, nobody else needs to
            raise
        answer.set_result(outcome)
        return outcome

    def __len__(self) -> int:
        return sum(len(mine) for mine in self._answers.values())
