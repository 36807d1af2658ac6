"""The floor API's Integrity view (docs/integrity.md): the audited devices and tables, one
shaker's faces, one shuffler's card x position table, one table's hold per shift."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import FastAPI, Query

from daemon.floor import integrity_view
from daemon.floor.routing import TABLE_ID, Who
from daemon.floor.shapes import IntegrityDevices, IntegrityDice, IntegrityHold, IntegrityShuffle
from daemon.floor.store import Store


def add_integrity(app: FastAPI, store: Store) -> None:
    """The four integrity routes, on `app`."""

    @app.get("/api/integrity", response_model=IntegrityDevices, tags=["integrity"])
    async def get_integrity(who: Who) -> dict[str, Any]:
        """The devices and tables the integrity passes have audited (docs/integrity.md), each
        with whether an integrity alert of it is open."""
        return await integrity_view.devices(store)

    @app.get("/api/integrity/dice", response_model=IntegrityDice, tags=["integrity"])
    async def get_integrity_dice(
        who: Who,
        table: Annotated[str, Query(pattern=TABLE_ID)],
        serial: Annotated[str, Query(min_length=1, max_length=200)],
    ) -> dict[str, Any]:
        """One shaker's faces against fair dice's expected count and 99 % band."""
        return await integrity_view.dice(store, table, serial)

    @app.get("/api/integrity/shuffle", response_model=IntegrityShuffle, tags=["integrity"])
    async def get_integrity_shuffle(
        who: Who,
        table: Annotated[str, Query(pattern=TABLE_ID)],
        serial: Annotated[str, Query(min_length=1, max_length=200)],
    ) -> dict[str, Any]:
        """One shuffler's card x position table (count / expected) and rising sequences
        beside a random deck's."""
        return await integrity_view.shuffle(store, table, serial)

    @app.get("/api/integrity/hold", response_model=IntegrityHold, tags=["integrity"])
    async def get_integrity_hold(
        who: Who, table: Annotated[str, Query(pattern=TABLE_ID)]
    ) -> dict[str, Any]:
        """One table's hold z per shift against its rule set's game math."""
        return await integrity_view.hold(store, table)
