"""Who is asking: the bearer token checked against the tokens file, with the bad-token lockout,
as a FastAPI dependency (`Who`) and for the push feed's first message."""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any

import structlog
from fastapi import Depends, Request
from fastapi.security import HTTPBearer

from daemon.api.errors import ApiError
from daemon.api.facade import TableFacade
from daemon.api.ratelimit import AuthFailureLimiter
from daemon.api.tokens import Principal, TokenStore, fingerprint

log = structlog.get_logger("tabled.api")


class Gate:
    """Token checks and the bad-token lockout for one app."""

    def __init__(
        self,
        table: TableFacade,
        tokens: TokenStore,
        limiter: AuthFailureLimiter,
        max_failures: int,
        lockout: float,
    ) -> None:
        self.table, self.tokens, self.limiter = table, tokens, limiter
        self.max_failures, self.lockout = max_failures, lockout
        self.refused: Counter[str] = Counter()

    async def authenticate(self, token: str | None, client: str) -> Principal:
        wait = self.limiter.retry_after(client)
        if wait > 0 and token:
            self.refused["rate_limited"] += 1
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
        if principal is not None:
            return principal
        self.refused["bad_token"] += 1
        tag = fingerprint(token)
        log.warning("api.auth_failed", client=client, token_fingerprint=tag)
        await self.table.journal_security("api.auth_failed", {"client": client, "token": tag})
        if self.limiter.failed(client):
            log.warning("api.auth_rate_limited", client=client, lockout_s=self.lockout)
            await self.table.journal_security(
                "api.auth_rate_limited",
                {"client": client, "failures": self.max_failures, "lockout_s": self.lockout},
            )
        raise ApiError(401, "unauthorized", "token not recognised", {"WWW-Authenticate": "Bearer"})


_bearer = HTTPBearer(auto_error=False, description="a person's API token")


async def _principal(request: Request, _: Annotated[Any, Depends(_bearer)]) -> Principal:
    header = request.headers.get("authorization", "")
    scheme, _sep, token = header.partition(" ")
    if header and scheme.lower() != "bearer":
        raise ApiError(401, "unauthorized", "use `Authorization: Bearer TOKEN`")
    client = request.client.host if request.client else "unknown"
    gate: Gate = request.app.state.gate
    return await gate.authenticate(token.strip() or None, client)


Who = Annotated[Principal, Depends(_principal)]
