"""Reading an input's payload: each reader refuses (`Refused`, citing the action's article) what
the procedure cannot take. `check_params` checks an action's declared parameters
(`daemon.procedures.spec.Param`) the way the API's request models do, so the procedure refuses
whatever the API would; the game's own checks then read values already known to be well-formed.
Device facts, whose payload no person types, are read by the other readers here."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Misfit:
    """What is wrong with a payload for its declared parameters: the one check's finding
    (`misfit`), which the procedure words as a refusal (`check_params`) and the API as a 422
    (`daemon.api.models.check_payload`).

    `problem`: "unknown" (fields not declared: `keys`), "missing", "type" (not the kind
    declared), "below" / "above" (an integer out of its bounds), "short" / "long" (a text's
    characters or a list's items), "choice" (a text not among the choices). `index` names the
    list item whose value is wrong (its kind or its bounds), None for the value as a whole."""

    key: str
    problem: str
    value: Any = None
    index: int | None = None
    keys: tuple[str, ...] = ()


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _size_misfit(key: str, param: Param, value: Any) -> Misfit | None:
    size = len(value)
    if param.min_length is not None and size < param.min_length:
        return Misfit(key, "short", value)
    if param.max_length is not None and size > param.max_length:
        return Misfit(key, "long", value)
    return None


def _bound_misfit(key: str, param: Param, value: int, index: int | None = None) -> Misfit | None:
    if param.minimum is not None and value < param.minimum:
        return Misfit(key, "below", value, index)
    if param.maximum is not None and value > param.maximum:
        return Misfit(key, "above", value, index)
    return None


def value_misfit(key: str, param: Param, value: Any) -> Misfit | None:
    """What is wrong with `value` for `param` (named `key`); None when it fits."""
    if param.kind == "int":
        return _bound_misfit(key, param, value) if _is_int(value) else Misfit(key, "type", value)
    if param.kind == "bool":
        return None if isinstance(value, bool) else Misfit(key, "type", value)
    if param.kind == "str":
        if not isinstance(value, str):
            return Misfit(key, "type", value)
        found = _size_misfit(key, param, value)
        if found is None and param.choices and value not in param.choices:
            found = Misfit(key, "choice", value)
        return found
    if not isinstance(value, list):
        return Misfit(key, "type", value)
    found = _size_misfit(key, param, value)
    for index, item in enumerate(value):
        if found is not None:
            break
        if param.kind == "list[int]":
            if not _is_int(item):
                return Misfit(key, "type", item, index)
            found = _bound_misfit(key, param, item, index)
        elif not isinstance(item, str):
            return Misfit(key, "type", item, index)
    return found


def misfit(
    params: Mapping[str, Param], payload: Mapping[str, Any], also: Collection[str] = ()
) -> Misfit | None:
    """The first thing wrong with `payload` for `params` (fields beyond them, then each
    parameter in its declared order); None when it fits. `also`: fields taken beside the
    parameters (a supervisor's `reason`)."""
    unknown = sorted(set(payload) - set(params) - set(also))
    if unknown:
        return Misfit(unknown[0], "unknown", keys=tuple(unknown))
    for key, param in params.items():
        if key in payload:
            found = value_misfit(key, param, payload[key])
            if found is not None:
                return found
        elif param.required:
            return Misfit(key, "missing")
    return None


def check_params(action: Action, payload: Mapping[str, Any]) -> None:
    """Refuse a payload that does not fit `action.params`: an unknown field, a required one
    missing, a value of the wrong kind or out of its bounds. A supervisor's `reason` travels in
    the payload (the API adds it beside the parameters). Actions without declared parameters
    (device facts) are read by their own checks."""
    if action.params is None:
        return
    found = misfit(action.params, payload, ("reason",) if action.requires_reason else ())
    if found is None:
        return
    if found.problem == "unknown":
        known = ", ".join(action.params) or "none"
        unknown = ", ".join(found.keys)
        raise Refused(
            action.article,
            f"unknown field(s) {unknown} for {action.name} (known: {known})",
            zh=f"{action.name} 沒有欄位 {unknown}（可用：{known}）",
        )
    param = action.params[found.key]
    raise _refusal(found, param, param.article or action.article)


def _refusal(found: Misfit, param: Param, article: str) -> Refused:
    """The procedure's refusal of `found`, in English and Chinese, citing `article`."""
    key, value, name = found.key, found.value, _zh(found.key, param)
    what = "characters" if param.kind == "str" else "items"
    if found.problem == "missing":
        return Refused(article, f"{key} is required", key, zh=f"須填寫{name}")
    if found.problem in ("below", "above"):
        low, high = param.minimum, param.maximum
        bound = (
            f"{low}..{high}"
            if low is not None and high is not None
            else (f">= {low}" if low is not None else f"<= {high}")
        )
        return Refused(
            article,
            f"{key} must be {bound}, got {value}",
            key,
            zh=f"{name}須為 {bound}，收到 {value}",
        )
    if found.problem == "short" and param.min_length == 1 and what == "characters":
        return Refused(article, f"{key} must be a non-empty string", key, zh=f"{name}不可留空")
    if found.problem == "short":
        return Refused(
            article,
            f"{key} must have at least {param.min_length} {what}",
            key,
            zh=f"{name}至少要有 {param.min_length} {_ZH_UNITS[what]}",
        )
    if found.problem == "long":
        return Refused(
            article,
            f"{key} must have at most {param.max_length} {what}",
            key,
            zh=f"{name}最多只可有 {param.max_length} {_ZH_UNITS[what]}",
        )
    if found.problem == "choice":
        choices = ", ".join(map(repr, param.choices))
        return Refused(
            article, f"{key} must be one of {choices}", key, zh=f"{name}須為以下之一：{choices}"
        )
    if found.index is not None and param.kind == "list[int]":
        return Refused(
            article,
            f"{key} must list integers, not {value!r}",
            key,
            zh=f"{name}只可列出整數，不是 {value!r}",
        )
    if found.index is not None:
        return Refused(
            article,
            f"{key} must list strings, not {value!r}",
            key,
            zh=f"{name}只可列出文字，不是 {value!r}",
        )
    if param.kind == "int":
        return Refused(article, f"{key} must be an integer", key, zh=f"{name}須為整數")
    if param.kind == "bool":
        return Refused(article, f"{key} must be true or false", key, zh=f"{name}須為是或否")
    if param.kind == "str":
        return Refused(article, f"{key} must be a string", key, zh=f"{name}須為文字")
    return Refused(article, f"{key} must be a list", key, zh=f"{name}須為列表")


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
