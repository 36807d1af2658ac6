"""The API's refusals said the way a person at a shell acts on them.

The API answers HTTP clients ("send `Authorization: Bearer TOKEN`", `payload.seat`,
`query.limit`) and, for the few shapes checked by FastAPI itself, in pydantic's words ("Input
should be a valid integer"). The client commands say the same in their own terms: the variable
or option to set, `seat=` for a parameter, `--limit` for an option.
"""

from __future__ import annotations

import re
from typing import Any

GET_ONE = "`tabled token NAME ROLE --append FILE` makes one"
# pydantic's phrases, in the words the rest of tabled uses.
_PYDANTIC = (
    (re.compile(r"Input should be greater than or equal to (\S+)"), r"must be at least \1"),
    (re.compile(r"Input should be less than or equal to (\S+)"), r"must be at most \1"),
    (re.compile(r"Input should be greater than (\S+)"), r"must be more than \1"),
    (re.compile(r"Input should be less than (\S+)"), r"must be less than \1"),
    (re.compile(r"Input should be a valid integer.*"), "expected a whole number"),
    (re.compile(r"Input should be a valid number.*"), "expected a number"),
    (re.compile(r"Input should be a valid boolean.*"), "expected true or false"),
    (re.compile(r"Input should be a valid string.*"), "expected text"),
    (re.compile(r"Input should be a valid dictionary.*"), "expected key=value pairs"),
    (re.compile(r"Input should be a valid list.*"), "expected a list, e.g. [1,2]"),
    (
        re.compile(r"Input should be a valid datetime.*"),
        "expected an ISO time like 2026-11-29T20:00",
    ),
    (re.compile(r"String should have at most (\d+) characters?"), r"at most \1 characters"),
    (re.compile(r"String should have at least (\d+) characters?"), r"at least \1 characters"),
    (re.compile(r"Field required"), "required"),
    (re.compile(r"Extra inputs are not permitted"), "not a known option"),
)
# Where the API says a value came from -> where the command line takes it.
_FIELDS = (
    (re.compile(r"\bquery\.(\w+):?"), lambda m: "--" + m.group(1).replace("_", "-") + ":"),
    (re.compile(r"\bpayload\.(\w+):?"), lambda m: m.group(1) + ":"),
    (re.compile(r"^payload\b"), lambda _m: "the action's key=value parameters"),
    (re.compile(r"^(reason|request_id)\b"), lambda m: "--" + m.group(1).replace("_", "-")),
)


def plain(message: str) -> str:
    """An API message with pydantic's phrases and the API's field paths in CLI terms."""
    for pattern, replacement in _PYDANTIC:
        message = pattern.sub(replacement, message)
    for field, option in _FIELDS:
        message = field.sub(option, message)
    return message


def cli_message(status: int, content: dict[str, Any], token_source: str | None) -> str:
    """What the client commands print for a refused request."""
    error = str(content.get("error", ""))
    message = str(content.get("message") or f"the table answered HTTP {status}")
    if status == 401:
        if token_source is None:
            return f"no token: set TABLED_TOKEN or use --token-file FILE ({GET_ONE})"
        if error == "rate_limited" or "too many" in message.lower():
            return f"{plain(message)}; wait a minute before trying again"
        return (
            f"the token from {token_source} is not one this table knows (or it was disabled): "
            f"check it, or ask an admin for a new one ({GET_ONE})"
        )
    if status == 403 and error == "forbidden":
        return f"{message}: use the token of a person with that role"
    return plain(message)
