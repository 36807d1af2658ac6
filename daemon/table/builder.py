"""The procedure of the configured game: the one builder, `daemon.procedures.build`."""

from __future__ import annotations

from daemon.procedures import build as build_procedure

__all__ = ["build_procedure"]
