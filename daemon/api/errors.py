"""The API's errors: one JSON shape (`{"error", "message"}`) for every refusal, whichever layer
makes it (the app's checks, FastAPI's validation, Starlette's 404/405)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException


class ApiError(Exception):
    def __init__(
        self, status: int, error: str, message: str, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.error, self.message = status, error, message
        self.headers = dict(headers or {})


def error_response(status: int, error: str, message: str, **extra: Any) -> JSONResponse:
    headers = extra.pop("headers", None)
    return JSONResponse({"error": error, "message": message, **extra}, status, headers=headers)


class ErrorBody(BaseModel):
    error: str = Field(description="machine-readable reason, e.g. unauthorized, unknown_action")
    message: str = Field(description="what was wrong, in words")


AUTH_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "no token, or not a valid one"},
    429: {"model": ErrorBody, "description": "too many bad tokens from this client"},
}
INPUT_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "the body is not JSON"},
    422: {"model": ErrorBody, "description": "a field is missing, unknown or of the wrong type"},
}


def install_handlers(app: FastAPI) -> None:
    """Every error the app raises answers in the one shape."""

    @app.exception_handler(ApiError)
    async def _apierror_response(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.error, exc.message, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()))
            problems.append(f"{where}: {err.get('msg', 'invalid')}")
        return error_response(422, "invalid_input", "; ".join(problems) or "invalid input")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        names = {404: "not_found", 405: "method_not_allowed"}
        return error_response(
            exc.status_code,
            names.get(exc.status_code, "http_error"),
            f"{request.method} {request.url.path}: {exc.detail}",
            headers=getattr(exc, "headers", None),
        )
