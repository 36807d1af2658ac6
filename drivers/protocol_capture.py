"""pyserial's hook for `capture://<inner url>#<file>`: it imports `drivers.protocol_capture`."""

from __future__ import annotations

from drivers.capture import Serial

__all__ = ["Serial"]
