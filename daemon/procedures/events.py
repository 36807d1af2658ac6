"""The journal events both games' tables write alike, as data (`daemon.procedures.spec.Event`):
those the shared layers of every procedure emit (equipment, bets, dice, HOLD and TILT, two-person
steps, the settlement and the void), and those the table around the procedure journals (the
runtime, its devices, the journal itself, the API process's security facts). Each game's
declaration (`daemon/procedures/<game>/game.py`, `EVENTS`) adds its own to these; the readers
are the procedure's `emit` (it refuses a name its game did not declare), the redaction
(`daemon.procedures.visibility`: what a line opens, whether it closes its round), the floor's
derived phase (`daemon.floor.derived`), the console's labels (`GET /api/actions`, `events`) and
docs/procedures.md."""

from __future__ import annotations

from daemon.procedures.spec import Event

# Who journals what, beside the procedure: the names the runtime, the devices, the journal and
# the API process write (daemon/table/, daemon/journal/, daemon/api/, daemon/training.py).
INPUT_EVENT = "table.input"
CHECKPOINT_EVENT = "table.checkpoint"
VIOLATION_EVENT = "table.violation"


def procedure_events(*, opened_to: str) -> list[Event]:
    """What the shared layers of a procedure emit (`base`, `faults`, `overrides`, the engine's
    refusals) and the bets, settlement and void both games write under the same names.
    `opened_to`: the phase `open_table` leads to in the game."""
    return [
        Event("device.identified", "Device identified", "設備已識別", "EQUIPMENT_CHECK"),
        Event("table.opened", "Table opened", "開枱", opened_to),
        Event("bet.placed", "Bet placed", "已下注", "BETTING"),
        Event("bet.withdrawn", "Bet withdrawn", "已撤注", "BETTING"),
        Event("bet.moved", "Bet moved", "已移注", "BETTING"),
        Event("bets.closed", "Bets closed", "停止下注", "SHAKING"),
        # The deal starts from the valid throw (Thirteen Art. 2(a), Pai Gow Art. 3).
        Event("dice.landed", "Dice landed", "骰子結果", "DEALING"),
        # Shaken again, or the third in a row: a TILT (its `table.tilted` follows).
        Event("dice.invalid", "Invalid throw", "無效擲骰"),
        Event("round.settled", "Round settled", "本局結算", "ROUND_OVER", True, "settled"),
        Event("table.tilted", "Table tilted", "設備故障", "TILT"),
        # HOLD, or TILT when the table was tilted already (a TILT is not eased into a HOLD).
        Event("table.held", "Table held", "暫停"),
        # Held for a supervisor, or (a clean stop between rounds) ready to play: its `held` and
        # `reason` say which.
        Event("table.recovered", "Restarted", "系統重啟"),
        # HOLD or TILT, as it was: the device is healthy, a supervisor clears.
        Event("device.healthy", "Device healthy", "設備恢復正常"),
        # Its payload names the phase it resumes (`phase`).
        Event("table.resumed", "Table resumed", "恢復遊戲"),
        # The phase after a void is the game's restart (the equipment check, the shuffle, the
        # bank's offer): the next line says it.
        Event("round.voided", "Round voided", "本局作廢", closes_round=True),
        Event("bets.returned", "Bets returned", "退回注碼", closes_round=True),
        # A two-person step (a card entered by hand, a void): the phase stays, or its approval
        # takes the step, whose own line follows.
        Event("override.proposed", "Proposed for approval", "提出待批"),
        Event("override.approved", "Approved", "已批准"),
        Event("override.rejected", "Rejected", "已駁回"),
        Event("override.lapsed", "Proposal lapsed", "提議已失效"),
        # A device replaced by another of its approved build, two supervisors (its approval).
        Event("device.replaced", "Device replaced", "設備已更換"),
        Event(VIOLATION_EVENT, "Refused", "已拒絕操作"),
    ]


# What the table around the procedure journals: no phase of the game follows from these, none
# closes a round, none opens a card (a card or tile they carry, an input's or a checkpoint's,
# is served as the game has opened it, as any line's is).
TABLE_EVENTS: tuple[Event, ...] = (
    Event(INPUT_EVENT, "Input", "輸入", by="table"),
    Event(CHECKPOINT_EVENT, "Checkpoint", "檢查點", by="table"),
    Event("table.started", "Table started", "枱已啟動", by="table"),
    Event("table.stopped", "Table stopped", "枱已停止", by="table"),
    Event("table.recovery", "Recovered from the journal", "從日誌恢復", by="table"),
    Event("device.link_degraded", "Device link degraded", "設備連線欠佳", by="table"),
    Event("device.restarted", "Device restarted", "設備已重啟", by="table"),
    Event("journal.opened", "Journal opened", "日誌已開啟", by="table"),
    Event("journal.torn_tail_truncated", "Torn line cut", "截去不完整記錄", by="table"),
    Event("training.control", "Training control", "培訓操作", by="table"),
    Event("api.forbidden", "Forbidden", "禁止操作", by="table"),
    Event("api.auth_refused", "Sign-ins refused", "登入被拒", by="table"),
    Event("api.input_refused", "Requests refused", "請求被拒", by="table"),
    Event("api.plain_http_behind_proxy", "Plain HTTP behind a proxy", "代理後未加密", by="table"),
    Event("api.process_died", "API process died", "API 進程終止", by="table"),
    Event("api.channel_refused", "API channel refused", "API 通道被拒", by="table"),
)
