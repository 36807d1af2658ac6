"""Reading an input's payload: each reader refuses (`Refused`, citing the action's article) what
the procedure cannot take. `check_params` checks an action's declared parameters
(`daemon.procedures.spec.Param`) the way the API's request models do, so the procedure refuses
whatever the API would; the game's own checks then read values already known to be well-formed.
Device facts, whose payload no person types, are read by the other readers here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from daemon.procedures.spec import Action, Param

T = TypeVar("T")


class Refused(Exception):
    """Raised inside a check to refuse an input; the engine turns it into a `Violation`.

    Every refusal is said in both of the dealer's languages: `reason` in English and `zh` in
    Chinese, built from the same values (so the Chinese tells nothing the English does not: a
    card a person named, never a hidden one). A card or tile named in `zh` stands apart from
    the Chinese around it (a space, 「」), so the redaction finds it as it finds it in `reason`.
    """

    def __init__(self, article: str, reason: str, field: str | None = None, *, zh: str) -> None:
        super().__init__(reason)
        self.article = article
        self.reason = reason
        self.zh = zh
        self.field = field  # the payload field whose value is refused, when one is


# A parameter's name in a Chinese refusal: its label (`Param.label_zh`), else its key.
def _zh(key: str, param: Param) -> str:
    return param.label_zh or key


_ZH_UNITS = {"characters": "個字", "items": "項"}


def check_params(action: Action, payload: Mapping[str, Any]) -> None:
    """Refuse a payload that does not fit `action.params`: an unknown field, a required one
    missing, a value of the wrong kind or out of its bounds. A supervisor's `reason` travels in
    the payload (the API adds it beside the parameters). Actions without declared parameters
    (device facts) are read by their own checks."""
    if action.params is None:
        return
    allowed = set(action.params) | ({"reason"} if action.requires_reason else set())
    unknown = sorted(set(payload) - allowed)
    if unknown:
        known = ", ".join(action.params) or "none"
        raise Refused(
            action.article,
            f"unknown field(s) {', '.join(unknown)} for {action.name} (known: {known})",
            zh=f"{action.name} 沒有欄位 {', '.join(unknown)}（可用：{known}）",
        )
    for key, param in action.params.items():
        if key in payload:
            try:
                check_value(key, param, payload[key], param.article or action.article)
            except Refused as refusal:
                refusal.field = key
                raise
        elif param.required:
            raise Refused(
                param.article or action.article,
                f"{key} is required",
                key,
                zh=f"須填寫{_zh(key, param)}",
            )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _bounded(key: str, param: Param, value: int, article: str) -> None:
    low, high = param.minimum, param.maximum
    if (low is not None and value < low) or (high is not None and value > high):
        bound = (
            f"{low}..{high}"
            if low is not None and high is not None
            else (f">= {low}" if low is not None else f"<= {high}")
        )
        raise Refused(
            article,
            f"{key} must be {bound}, got {value}",
            zh=f"{_zh(key, param)}須為 {bound}，收到 {value}",
        )


def _sized(key: str, param: Param, size: int, what: str, article: str) -> None:
    if param.min_length is not None and size < param.min_length:
        if param.min_length == 1 and what == "characters":
            raise Refused(
                article, f"{key} must be a non-empty string", zh=f"{_zh(key, param)}不可留空"
            )
        raise Refused(
            article,
            f"{key} must have at least {param.min_length} {what}",
            zh=f"{_zh(key, param)}至少要有 {param.min_length} {_ZH_UNITS.get(what, what)}",
        )
    if param.max_length is not None and size > param.max_length:
        raise Refused(
            article,
            f"{key} must have at most {param.max_length} {what}",
            zh=f"{_zh(key, param)}最多只可有 {param.max_length} {_ZH_UNITS.get(what, what)}",
        )


def check_value(key: str, param: Param, value: Any, article: str) -> None:
    """Refuse `value` for `param` (named `key`), citing `article`."""
    if param.kind == "int":
        if not _is_int(value):
            raise Refused(article, f"{key} must be an integer", zh=f"{_zh(key, param)}須為整數")
        _bounded(key, param, value, article)
    elif param.kind == "bool":
        if not isinstance(value, bool):
            raise Refused(
                article, f"{key} must be true or false", zh=f"{_zh(key, param)}須為是或否"
            )
    elif param.kind == "str":
        if not isinstance(value, str):
            raise Refused(article, f"{key} must be a string", zh=f"{_zh(key, param)}須為文字")
        _sized(key, param, len(value), "characters", article)
        if param.choices and value not in param.choices:
            raise Refused(
                article,
                f"{key} must be one of {', '.join(map(repr, param.choices))}",
                zh=f"{_zh(key, param)}須為以下之一：{', '.join(map(repr, param.choices))}",
            )
    else:
        if not isinstance(value, list):
            raise Refused(article, f"{key} must be a list", zh=f"{_zh(key, param)}須為列表")
        _sized(key, param, len(value), "items", article)
        for item in value:
            if param.kind == "list[int]":
                if not _is_int(item):
                    raise Refused(
                        article,
                        f"{key} must list integers, not {item!r}",
                        zh=f"{_zh(key, param)}只可列出整數，不是 {item!r}",
                    )
                _bounded(key, param, item, article)
            elif not isinstance(item, str):
                raise Refused(
                    article,
                    f"{key} must list strings, not {item!r}",
                    zh=f"{_zh(key, param)}只可列出文字，不是 {item!r}",
                )


def text(payload: Mapping[str, Any], key: str, article: str) -> str:
    value = payload.get(key)
    if not isinstance(value, str) or not value:
        raise Refused(article, f"{key} must be a non-empty string", zh=f"{key} 須為非空字串")
    return value


def integer(
    payload: Mapping[str, Any], key: str, article: str, low: int, high: int | None = None
) -> int:
    value = payload.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise Refused(article, f"{key} must be an integer", zh=f"{key} 須為整數")
    if value < low or (high is not None and value > high):
        bound = f"{low}..{high}" if high is not None else f">= {low}"
        raise Refused(
            article, f"{key} must be {bound}, got {value}", zh=f"{key} 須為 {bound}，收到 {value}"
        )
    return value


def flag(payload: Mapping[str, Any], key: str, article: str, default: bool | None = None) -> bool:
    value = payload.get(key, default)
    if not isinstance(value, bool):
        raise Refused(article, f"{key} must be true or false", zh=f"{key} 須為是或否")
    return value


INVALID_REASONS = ("die_tilted", "dice_stacked", "die_out_of_cup", "short_shake", "no_shake")


def dice_reading(payload: Mapping[str, Any], article: str, valid_article: str) -> bool:
    """Check a shaker's reading; True when the throw counts.

    A valid throw carries four dice 1..6. An invalid one (a die tilted or out of the cup, the
    dice stacked, a short shake: the wire reads no dice for it) may carry them, a `reason` and
    the `die` concerned (1-4, or 0 for the throw as a whole).
    """
    valid = flag(payload, "valid", valid_article, True)
    dice = payload.get("dice")
    if dice is not None or valid:
        if not isinstance(dice, list) or len(dice) != 4:
            raise Refused(article, "dice must be a list of four", zh="骰子須為四粒的列表")
        for die in dice:
            if not _is_int(die) or not 1 <= die <= 6:
                raise Refused(
                    article, f"a die reads 1..6, not {die!r}", zh=f"骰子點數為 1 至 6，不是 {die!r}"
                )
    if not valid:
        reason = payload.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise Refused(valid_article, "reason must be a string", zh="原因須為文字")
        if "die" in payload:
            integer(payload, "die", valid_article, 0, 4)
    return valid


def need(value: T | None) -> T:
    """A value the phase guarantees (the transition table admits the action only then)."""
    if value is None:
        raise RuntimeError("the procedure reached a phase without the state it requires")
    return value
