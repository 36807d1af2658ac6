"""The floor API's shapes: what each route answers (its OpenAPI schema) and its error."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ApiError(Exception):
    def __init__(self, status: int, error: str, message: str) -> None:
        super().__init__(message)
        self.status, self.error, self.message = status, error, message


# --- shapes ------------------------------------------------------------------------------------


class Acknowledged(BaseModel):
    """What a person taking a chain alert, a violation or a fault in hand adds to it."""

    acknowledged_at: datetime | None = Field(None, description="when a person took it in hand")
    acknowledged_by: str | None = Field(None, description="who acknowledged it")
    acknowledged_role: str | None = None
    ack_note: str | None = Field(None, description="what they said they are doing about it")


class Said(BaseModel):
    """A line (or a row made of one) in words, from the game's data."""

    said: dict[str, str] = Field(
        default_factory=dict, description='the line in words, {"zh": ..., "en": ...}'
    )


class ChainAlert(Acknowledged):
    id: int
    table: str
    seq: int = Field(description="the seq the alert is about (a gap's first missing seq)")
    kind: str = Field(
        description="gap | fork | broken_link | malformed | unknown_table | forged | replay | "
        "unproven (details: lines, oldest_seq, newest_seq, oldest_seconds, bounds); the "
        "integrity update's dice_bias | shuffle_bias | reader_misreads | hold_outlier "
        "(details: subject, verdict, statistic, p_value, power, samples, tests)"
    )
    expected_hash: str | None = Field(description="the hash the chain called for")
    actual_hash: str | None = Field(description="the hash (or prev) the floor received")
    gap_to: int | None = Field(description="a gap's last missing seq")
    details: dict[str, Any]
    detected_at: datetime
    resolved_at: datetime | None = Field(description="a gap filled later by a resend")


class Acknowledgement(BaseModel):
    """The body of `POST /api/alerts/{id}/acknowledge`."""

    model_config = ConfigDict(extra="forbid")

    note: str = Field(
        min_length=3,
        max_length=500,
        pattern=r"\S",
        description="what is being done about it (e.g. 'called IT; table T07 held')",
    )


class TableSummary(BaseModel):
    table: str
    pit: str | None
    game: str | None
    phase: str | None
    phase_said: dict[str, str] | None = Field(
        None, description='the phase by its name in the game\'s data, {"zh": ..., "en": ...}'
    )
    state: str = Field(description="playing | held | tilted | stopped")
    reason: str | None = Field(description="why it is held or tilted")
    round: str | None
    last_seq: int
    contiguous_seq: int
    pending_overrides: int
    last_event: str | None
    last_ts: datetime | None
    received_at: datetime | None
    lag_seconds: float | None = Field(description="from the table's write to the floor's commit")
    chain: str | ChainAlert = Field(description='"ok", or the oldest unresolved chain alert')
    live_seq: int | None = Field(
        None,
        description="the newest seq the live view read, when newer than the history's "
        "(`last_seq`); game, phase, state, reason, round, last_event and last_ts are then its",
    )
    provisional: bool = Field(
        False, description="the history is more than 3 s behind the live view (catching up)"
    )


class EventRow(Said):
    seq: int
    ts: datetime
    event: str
    round: str | None
    actor: str
    payload: dict[str, Any]
    redacted: bool
    line: str | None = Field(description="the exact line (admin and audit only)")


class RoundRow(BaseModel):
    table: str
    round: str
    first_seq: int
    last_seq: int
    started_at: datetime
    ended_at: datetime | None
    status: str
    lines: int


class TableDetail(BaseModel):
    table: TableSummary
    rounds: list[RoundRow]
    events: list[EventRow]
    alerts: list[ChainAlert]


class ViolationRow(Acknowledged, Said):
    table: str
    seq: int
    ts: datetime
    round: str | None
    actor: str
    article: str | None
    action: str | None
    phase: str | None
    reason: str | None


class OverrideRow(BaseModel):
    table: str
    seq: int
    ts: datetime
    round: str | None
    status: str
    kind: str | None
    article: str | None
    proposed_by: str | None
    decided_by: str | None
    reason: str | None


class FaultRow(Acknowledged, Said):
    table: str
    seq: int
    ts: datetime
    round: str | None
    device: str | None
    fault: str | None
    kind: str
    make: str | None
    model: str | None
    serial: str | None


class Charts(BaseModel):
    since: datetime
    until: datetime
    bar: str = Field(description="hour, or day beyond 48 hours (UTC)")
    violations_per_article_hour: list[dict[str, Any]]
    faults_per_model: list[dict[str, Any]]
    rounds_per_hour: list[dict[str, Any]] = Field(description="the floor's total: hour, n")
    rounds_per_pit_hour: list[dict[str, Any]] = Field(description="pit, hour, n")


class TableChart(BaseModel):
    since: datetime
    until: datetime
    bar: str = Field(description="hour, or day beyond 48 hours (UTC)")
    rounds_per_hour: list[dict[str, Any]] = Field(description="the table's: hour, n")


class IntegrityDevice(BaseModel):
    table: str
    serial: str
    samples: int = Field(description="throws, or decks audited")
    flagged: bool = Field(description="an integrity alert of it is open")


class IntegrityTable(BaseModel):
    table: str
    flagged: bool = Field(description="a hold_outlier alert of it is open")


class IntegrityDevices(BaseModel):
    dice: list[IntegrityDevice]
    shuffle: list[IntegrityDevice]
    hold: list[IntegrityTable]


class IntegrityDice(BaseModel):
    table: str
    serial: str
    throws: int
    faces: list[int] = Field(description="counts of faces 1-6, the dice pooled")
    expected: float
    low: float = Field(description="99 % band of a fair face's count, low")
    high: float


class IntegrityShuffle(BaseModel):
    table: str
    serial: str
    decks: int
    ratio: list[list[float]] = Field(
        description="52 x 52: input position x output position, count / expected"
    )
    rising: list[int] = Field(description="decks with r rising sequences, r = 1..52")
    random_rising: list[float] = Field(description="as many random decks' expected counts")


class HoldPoint(BaseModel):
    shift: str
    z: float
    flagged: bool
    hold: float
    rounds: int


class IntegrityHold(BaseModel):
    table: str
    limit: float
    points: list[HoldPoint]


class Health(BaseModel):
    status: str
    version: str
    broker_connected: bool
    lines: int
    batches: int


class AlertKind(StrEnum):
    gap = "gap"
    fork = "fork"
    broken_link = "broken_link"
    malformed = "malformed"
    unknown_table = "unknown_table"
    forged = "forged"
    replay = "replay"
    unproven = "unproven"
    dice_bias = "dice_bias"
    shuffle_bias = "shuffle_bias"
    reader_misreads = "reader_misreads"
    hold_outlier = "hold_outlier"


class ReportFormat(StrEnum):
    json = "json"
    csv = "csv"
