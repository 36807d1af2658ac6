"""schemathesis against /openapi.json: whatever the schema allows (and what it does not, in
negative mode), the API answers with no 5xx and with what it documents."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import schemathesis
from api_support import auth, write_tokens
from fake_table import FakeTable, ManualClock
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from daemon.api.app import create_app
from daemon.config import ApiConfig

_tokens = write_tokens(Path(tempfile.mkdtemp(prefix="tabled-fuzz-")) / "tokens.toml")
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
