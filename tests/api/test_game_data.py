"""Each game is declared once (daemon/procedures/*/game.py) and every layer reads it: the text a
dealer reads in each phase, in both languages; the API's request models, which take and refuse
exactly what the procedure takes and refuses; and each game's own phase text (a Pai Gow table
never reads Thirteen's)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from api_support import auth, write_tokens
from fake_table import FakeTable, ManualClock
from server_process import table_server

from daemon.api.app import create_app
from daemon.api.models import check_payload, payload_model
from daemon.config import ApiConfig
from daemon.contract.facade import ActionSpec, ParamSpec
from daemon.procedures.games import GAMES
from daemon.procedures.paigow import PaiGowProcedure
from daemon.procedures.payload import Refused, check_params
from daemon.procedures.spec import Action, Game
from daemon.procedures.thirteen import ThirteenProcedure
from daemon.table.publish.views import action_specs, console_snapshot
from tests.loopback_http import http

PROCEDURES = {"thirteen": ThirteenProcedure, "paigow": PaiGowProcedure}
CJK = re.compile(r"[\u4e00-\u9fff]")


def _specs(game: str) -> dict[str, ActionSpec]:
    return {s.name: s for s in action_specs(PROCEDURES[game].ACTIONS, game)}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_phase_has_its_text_in_both_languages(game: str) -> None:
    declared = GAMES[game]
    assert list(declared.phases) == [p.name for p in PROCEDURES[game].Phase]
    for phase, text in declared.phases.items():
        assert text.label_en and text.next_en, phase
        assert CJK.search(text.label_zh) and CJK.search(text.next_zh), phase


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_action_and_operator_parameter_is_labelled_in_both_languages(game: str) -> None:
    declared = GAMES[game]
    assert declared.actions is PROCEDURES[game].ACTIONS
    for name, action in declared.actions.items():
        assert action.article.startswith(("Portaria", "tabled")), name
        assert action.label_en and CJK.search(action.label_zh), name
        if not action.operator:
            continue
        assert action.params is not None, f"{name}: an operator action declares its params"
        for key, param in action.params.items():
            assert param.label_en and CJK.search(param.label_zh), (name, key)


def test_a_pai_gow_table_reads_pai_gow_text_in_every_phase() -> None:
    thirteen, paigow = GAMES["thirteen"], GAMES["paigow"]
    dealing = console_snapshot({"game": "paigow", "phase": "DEALING"}, now=0.0, wall_now=0.0)
    assert dealing["next"] == paigow.phases["DEALING"].next_en
    assert "shoe" not in dealing["next"] and "13" not in dealing["next"]
    assert "十三" not in dealing["next_zh"]
    for phase in set(paigow.phases) & set(thirteen.phases) - {"HOLD", "TILT"}:
        view = console_snapshot({"game": "paigow", "phase": phase}, now=0.0, wall_now=0.0)
        assert view["next"] == paigow.phases[phase].next_en
    for phase, text in paigow.phases.items():
        assert not re.search(r"\bshoe\b|\bcards?\b|\b52\b", text.next_en), phase
    thirteen_view = console_snapshot(
        {"game": "thirteen", "phase": "DEALING"}, now=0.0, wall_now=0.0
    )
    assert thirteen_view["next"] == "the shoe deals 13 to each seat"


# ---- the API's models and the procedure agree -------------------------------------------------


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_operator_action_has_an_api_model_with_the_same_parameters(game: str) -> None:
    declared: Game = GAMES[game]
    specs = _specs(game)
    operator = {n for n, a in declared.actions.items() if a.operator}
    assert set(specs) == operator
    for name, spec in specs.items():
        action = declared.actions[name]
        assert action.params is not None
        model = payload_model(spec)
        assert list(model.model_fields) == list(action.params), name
        required = {k for k, f in model.model_fields.items() if f.is_required()}
        assert required == {k for k, p in action.params.items() if p.required}, name
        assert spec.requires_reason == action.requires_reason
        assert spec.roles == action.roles


def _good(param: ParamSpec) -> Any:
    low = param.minimum if param.minimum is not None else 1
    if param.kind == "int":
        return low
    if param.kind == "bool":
        return True
    if param.kind == "str":
        return param.choices[0] if param.choices else "x" * (param.min_length or 2)
    item: Any = low if param.kind == "list[int]" else "x"
    return [item] * (param.min_length or 1)


def _bad(param: ParamSpec) -> list[Any]:
    """Values the declaration refuses: the wrong kind, and each bound crossed."""
    wrong = {"int": ["2", 2.5, True, None], "bool": ["yes", 1, None], "str": [5, None, ["x"]]}
    out: list[Any] = list(wrong.get(param.kind, ["x", 5, None]))
    if param.kind == "int":
        if param.minimum is not None:
            out.append(param.minimum - 1)
        if param.maximum is not None:
            out.append(param.maximum + 1)
    if param.kind == "str":
        if param.max_length is not None:
            out.append("x" * (param.max_length + 1))
        if param.min_length:
            out.append("x" * (param.min_length - 1))
        if param.choices:
            out.append("nobody")
    if param.kind.startswith("list"):
        out.append([True] if param.kind == "list[int]" else [5])
        if param.max_length is not None:
            out.append([_good(param)[0]] * (param.max_length + 1))
        if param.min_length:
            out.append([_good(param)[0]] * (param.min_length - 1))
        if param.kind == "list[int]" and param.maximum is not None:
            out.append([param.maximum + 1])
    return out


def _procedure_takes(action: Action, payload: dict[str, Any]) -> bool:
    try:
        check_params(action, payload)
    except Refused as refusal:
        assert refusal.article.startswith(("Portaria", "tabled")), refusal.reason
        return False
    return True


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_api_and_the_procedure_take_and_refuse_the_same_payloads(game: str) -> None:
    declared = GAMES[game]
    for name, spec in _specs(game).items():
        action = declared.actions[name]
        assert action.params is not None
        good = {k: _good(p) for k, p in action.params.items()}
        assert check_payload(spec, good) is None, name
        assert _procedure_takes(action, good), name
        cases = [{**good, "unknown_field": 1}]
        for key, param in action.params.items():
            cases += [{**good, key: value} for value in _bad(param)]
            if param.required:
                cases.append({k: v for k, v in good.items() if k != key})
            else:
                minimal = {k: v for k, v in good.items() if k != key}
                assert check_payload(spec, minimal) is None, (name, key)
                assert _procedure_takes(action, minimal), (name, key)
        for payload in cases:
            problem = check_payload(spec, payload)
            assert problem is not None, (name, payload)
            assert not _procedure_takes(action, payload), (name, payload, problem)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_openapi_describes_each_actions_parameters(game: str, tokens_file: Path) -> None:
    class Catalog(FakeTable):
        def actions(self) -> list[ActionSpec]:
            return action_specs(PROCEDURES[game].ACTIONS, game)

    schema = create_app(Catalog(ManualClock()), ApiConfig(tokens_file=tokens_file)).openapi()
    post = schema["paths"]["/api/actions/{action}"]["post"]
    by_action = post["x-payload-by-action"]
    assert set(by_action) == set(_specs(game))
    components = schema["components"]["schemas"]
    for name, action in GAMES[game].actions.items():
        if not action.operator:
            continue
        assert action.params is not None
        model = components[by_action[name]["$ref"].rsplit("/", 1)[1]]
        assert list(model.get("properties", {})) == list(action.params), name
        assert model["additionalProperties"] is False
        for key, param in action.params.items():
            field = model["properties"][key]
            assert field["title"] == param.label_en
            assert param.label_zh in field["description"]
    bets = components["Payload_place_bet"]["properties"]["seat"]
    assert (bets["minimum"], bets["maximum"]) == ((0, 3) if game == "thirteen" else (0, 7))


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_console_reads_its_games_phases_and_events_from_api_actions(
    game: str, tmp_path: Path
) -> None:
    """`GET /api/actions` from the real table (devices simulated) carries the game's phases and
    journal events with their labels, as declared: the console's only source for them."""
    config = Path(__file__).resolve().parents[2] / "config" / "paigow.toml"
    tokens = write_tokens(tmp_path / "tokens.toml")
    with table_server(tokens, tmp_path / "journal", config if game == "paigow" else None) as url:
        body = http.get(url + "/api/actions", headers=auth("dealer")).json()
        # Every journal line the table has written so far is a declared event, with labels.
        lines = http.get(url + "/api/journal?limit=1000", headers=auth("dealer")).json()
    declared = GAMES[game]
    assert body["game"] == game
    assert [p["name"] for p in body["phases"]] == list(declared.phases)
    assert body["phases"][0]["label_zh"] == declared.phases[body["phases"][0]["name"]].label_zh
    events = {e["name"]: e for e in body["events"]}
    assert list(events) == list(declared.events)
    for name, event in events.items():
        assert event == declared.events[name].as_json()
        assert event["label_en"] and CJK.search(event["label_zh"]), name
    assert events["round.settled"]["closes_round"] and events["bets.closed"]["phase_after"]
    written = {line["event"] for line in lines["events"]}
    assert {"journal.opened", "table.started"} <= written <= set(events)
