"""schemathesis against /openapi.json: whatever the schema allows (and what it does not, in
negative mode), the API answers with no 5xx and with what it documents."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from api_support import auth, write_tokens
from fake_table import FakeTable, ManualClock
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from server_process import table_server

from daemon.api.app import create_app
from daemon.config import ApiConfig
from daemon.contract.facade import ActionSpec
from daemon.procedures.thirteen import ThirteenProcedure
from daemon.table.publish.views import action_specs


class _ThirteenCatalog(FakeTable):
    """Only to draw the schema: the real Thirteen table's actions."""

    def actions(self) -> list[ActionSpec]:
        return action_specs(ThirteenProcedure.ACTIONS, "thirteen")


# Cases are drawn at collection, before any fixture: the app and its tokens exist at import, in
# a directory removed when the test process ends.
_workdir = tempfile.TemporaryDirectory(prefix="tabled-fuzz-")
_tokens = write_tokens(Path(_workdir.name) / "tokens.toml")
_table = FakeTable(ManualClock())
app = create_app(_table, ApiConfig(tokens_file=_tokens))
schema = schemathesis.openapi.from_asgi("/openapi.json", app)


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_5xx_and_answers_as_documented(case: Any) -> None:
    case.call_and_validate(
        headers=auth("dealer"),
        checks=[
            schemathesis.checks.not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ],
    )


@pytest.fixture(scope="module")
def real_table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The API over the real table runtime with every device simulated, over HTTP."""
    where = tmp_path_factory.mktemp("fuzz-table")
    with table_server(write_tokens(where / "tokens.toml"), where / "journal") as url:
        yield url


# The real table's schema, loaded here so the cases exist at collection; the calls go over HTTP.
real_schema = schemathesis.openapi.from_dict(
    create_app(_ThirteenCatalog(), ApiConfig(tokens_file=_tokens)).openapi()
)


@real_schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_5xx_from_the_real_table(case: Any, real_table: str) -> None:
    response = case.call_and_validate(
        base_url=real_table,
        headers=auth("dealer"),
        checks=[schemathesis.checks.not_a_server_error, status_code_conformance],
    )
    assert response.request.url.startswith(real_table)
