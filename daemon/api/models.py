"""The API's request models, built from each game's declaration.

Each operator action's parameters (`daemon.procedures.spec.Param`, served as `ParamSpec` by the
table's `ActionSpec`s) become one pydantic model (`payload_model`): strict kinds, bounds,
lengths, choices, no unknown field. The API validates a request's payload with it
(`check_payload`, whose words name the field and the problem), `/openapi.json` documents it
(`payload_schemas`), and `/api/actions` serves the same declaration to the console
(`catalog_entry`), so no layer keeps its own copy of an action's parameters.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError
from pydantic import create_model as _create_model

from daemon.contract.facade import ActionSpec, ParamSpec

_MODELS: dict[tuple[str, tuple[tuple[str, ParamSpec], ...]], type[BaseModel]] = {}


def _annotation(param: ParamSpec) -> Any:
    """The pydantic type of one parameter: its kind, and its bounds as constraints."""
    number = Annotated[StrictInt, Field(ge=param.minimum, le=param.maximum)]
    sized = Field(min_length=param.min_length, max_length=param.max_length)
    if param.kind == "int":
        return number
    if param.kind == "bool":
        return StrictBool
    if param.kind == "str":
        if param.choices:
            return Literal[param.choices]
        return Annotated[StrictStr, sized]
    if param.kind == "list[int]":
        return Annotated[list[number], sized]
    return Annotated[list[StrictStr], sized]


def payload_model(spec: ActionSpec) -> type[BaseModel]:
    """The request model of `spec`'s payload (one per action and parameter table)."""
    key = (spec.name, tuple(spec.params.items()))
    model = _MODELS.get(key)
    if model is None:
        fields: dict[str, Any] = {}
        for name, param in spec.params.items():
            description = " / ".join(t for t in (param.label_en, param.label_zh) if t)
            default = ... if param.required else None
            fields[name] = (
                _annotation(param),
                Field(default, title=param.label_en or name, description=description or None),
            )
        model = _create_model(
            f"Payload_{spec.name}",
            __config__=ConfigDict(extra="forbid", strict=True),
            __doc__=f"The payload of {spec.name}: {spec.label_en or spec.name}",
            **fields,
        )
        _MODELS[key] = model
    return model


def _shown(value: Any) -> str:
    return json.dumps(value)[:40]


def _words(spec: ActionSpec, error: Mapping[str, Any], payload: Mapping[str, Any]) -> str:
    """One pydantic error in the API's words: which field, what was wrong, what was given."""
    loc = tuple(error.get("loc", ()))
    kind = str(error.get("type", ""))
    name = str(loc[0]) if loc else ""
    param = spec.params.get(name)
    where = f"payload.{name}"
    if param is None:
        return f"{where}: {error.get('msg', 'invalid')}"
    if kind == "missing":
        return f"{where}: required for {spec.name} ({param.kind})"
    value = payload.get(name)
    if len(loc) > 1 and isinstance(loc[1], int) and isinstance(value, list):
        where, value = f"{where}[{loc[1]}]", value[loc[1]]
    if kind.startswith("int_"):
        return f"{where}: expected an integer, got {_shown(value)}"
    if kind == "greater_than_equal":
        return f"{where} must be at least {param.minimum}, got {value}"
    if kind == "less_than_equal":
        return f"{where} must be at most {param.maximum}, got {value}"
    if kind.startswith("bool_"):
        return f"{where}: expected true or false"
    if kind.startswith("string_type"):
        return f"{where}: expected a string, got {_shown(value)}"
    if kind == "string_too_long":
        return f"{where}: longer than {param.max_length} characters"
    if kind == "string_too_short":
        return f"{where}: at least {param.min_length} characters"
    if kind == "literal_error":
        shown = value[:40] if isinstance(value, str) else value
        if not isinstance(value, str):
            return f"{where}: expected a string, got {_shown(value)}"
        return f"{where}: one of {', '.join(param.choices)}, not {shown!r}"
    if kind == "list_type":
        return f"{where}: expected a list ({param.kind}), got {_shown(value)}"
    if kind == "too_long":
        return f"{where}: more than {param.max_length} items"
    if kind == "too_short":
        size = len(value) if isinstance(value, list) else 0
        return f"{where}: {size} items, at least {param.min_length} needed"
    return f"{where}: {error.get('msg', 'invalid')}"


def check_payload(spec: ActionSpec, payload: Mapping[str, Any]) -> str | None:
    """The first problem with `payload` for `spec`, in words; None when its model takes it."""
    if not spec.payload_checked:
        return None
    unknown = sorted(set(payload) - set(spec.params))
    if unknown:
        known = ", ".join(spec.params) or "none"
        return f"payload: unknown field(s) {', '.join(unknown)} for {spec.name} (known: {known})"
    try:
        payload_model(spec).model_validate(dict(payload))
    except ValidationError as exc:
        order = list(spec.params)
        errors = sorted(
            exc.errors(),
            key=lambda e: order.index(e["loc"][0]) if e["loc"] and e["loc"][0] in order else -1,
        )
        return _words(spec, errors[0], payload)
    return None


def payload_schemas(specs: Iterable[ActionSpec]) -> dict[str, dict[str, Any]]:
    """Each checked action's payload model as a JSON schema, keyed by the model's name."""
    schemas: dict[str, dict[str, Any]] = {}
    for spec in specs:
        if spec.payload_checked:
            model = payload_model(spec)
            schemas[model.__name__] = model.model_json_schema(
                ref_template="#/components/schemas/{model}"
            )
    return schemas


def catalog_entry(spec: ActionSpec) -> dict[str, Any]:
    """An action as `/api/actions` serves it: what the console builds its form from."""
    return {
        "name": spec.name,
        "roles": sorted(spec.roles),
        "requires_reason": spec.requires_reason,
        "payload_checked": spec.payload_checked,
        "label": {"en": spec.label_en or spec.name, "zh": spec.label_zh or spec.name},
        "params": {
            name: {
                "kind": p.kind,
                "required": p.required,
                "minimum": p.minimum,
                "maximum": p.maximum,
                "min_length": p.min_length,
                "max_length": p.max_length,
                "choices": list(p.choices),
                "label": {"en": p.label_en or name, "zh": p.label_zh or name},
            }
            for name, p in spec.params.items()
        },
    }
