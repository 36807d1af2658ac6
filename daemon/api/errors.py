"""The API's refusals: a status, a machine-readable name and a message in words."""

from __future__ import annotations

from collections.abc import Mapping


class ApiError(Exception):
    def __init__(
        self, status: int, error: str, message: str, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.error, self.message = status, error, message
        self.headers = dict(headers or {})
