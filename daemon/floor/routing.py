"""What the floor API's routes share: who is asking (the bearer token, checked by the app's
`authenticate`), and the parameters several routes take."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any

from fastapi import Depends, Query, Request
from fastapi.security import HTTPBearer

from daemon.api.tokens import Principal
from daemon.floor.shapes import ApiError

TABLE_ID = r"^[A-Za-z0-9_-]{1,64}$"

_bearer = HTTPBearer(auto_error=False, description="a person's floor API token")


async def principal(request: Request, _: Annotated[Any, Depends(_bearer)]) -> Principal:
    header = request.headers.get("authorization", "")
    scheme, _sep, token = header.partition(" ")
    if header and scheme.lower() != "bearer":
        raise ApiError(401, "unauthorized", "use `Authorization: Bearer TOKEN`")
    authenticate: Callable[[str | None, str], Principal] = request.app.state.authenticate
    return authenticate(token.strip() or None, request.client.host if request.client else "?")


Who = Annotated[Principal, Depends(principal)]
Since = Annotated[datetime | None, Query(description="ISO time, inclusive")]
Until = Annotated[datetime | None, Query(description="ISO time, exclusive")]
