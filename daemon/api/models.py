"""The API's request models, built from each game's declaration.

Each operator action's parameters (`daemon.procedures.spec.Param`, served as `ParamSpec` by the
table's `ActionSpec`s) are checked by the procedure's own check (`check_payload`, through
`daemon.procedures.payload.misfit`, in the API's words that name the field and the problem),
documented in `/openapi.json` as one pydantic model each (`payload_model`, `payload_schemas`:
strict kinds, bounds, lengths, choices, no unknown field), and served to the console by
`/api/actions` (`catalog_entry`), so no layer keeps its own copy of an action's parameters.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from pydantic import create_model as _create_model

from daemon.contract.facade import ActionSpec, ParamSpec
from daemon.procedures.payload import Misfit, misfit

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


def _words(spec: ActionSpec, found: Misfit) -> str:
    """What the one check found (`daemon.procedures.payload.misfit`), in the API's words: which
    field, what was wrong, what was given."""
    if found.problem == "unknown":
        known = ", ".join(spec.params) or "none"
        return f"payload: unknown field(s) {', '.join(found.keys)} for {spec.name} (known: {known})"
    param = spec.params[found.key]
    where, value = f"payload.{found.key}", found.value
    if found.index is not None:
        where = f"{where}[{found.index}]"
    if found.problem == "missing":
        return f"{where}: required for {spec.name} ({param.kind})"
    if found.problem == "below":
        return f"{where} must be at least {param.minimum}, got {value}"
    if found.problem == "above":
        return f"{where} must be at most {param.maximum}, got {value}"
    if found.problem == "short" and param.kind == "str":
        return f"{where}: at least {param.min_length} characters"
    if found.problem == "long" and param.kind == "str":
        return f"{where}: longer than {param.max_length} characters"
    if found.problem == "short":
        return f"{where}: {len(value)} items, at least {param.min_length} needed"
    if found.problem == "long":
        return f"{where}: more than {param.max_length} items"
    if found.problem == "choice":
        return f"{where}: one of {', '.join(param.choices)}, not {value[:40]!r}"
    if param.kind == "bool":
        return f"{where}: expected true or false"
    kind = param.kind.removeprefix("list[").rstrip("]") if found.index is not None else param.kind
    expected = {"int": "an integer", "str": "a string"}.get(kind, f"a list ({param.kind})")
    return f"{where}: expected {expected}, got {_shown(value)}"


def check_payload(spec: ActionSpec, payload: Mapping[str, Any]) -> str | None:
    """The first problem with `payload` for `spec`, in words; None when it fits. The check is
    the procedure's own (`daemon.procedures.payload.misfit`): what the API takes, the
    procedure takes, from the one declaration."""
    if not spec.payload_checked:
        return None
    found = misfit(spec.params, payload)
    return None if found is None else _words(spec, found)


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
