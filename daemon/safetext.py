"""Text that came from elsewhere (the journal, a device, the table's API, the floor) made safe to
print on a terminal or into a pipe that ends on one.

A reason typed at the console, a device's fault text or a forged line can hold control characters:
an ANSI escape (ESC, or the 8-bit CSI U+009B) recolours, moves the cursor, clears the screen or
retitles the window; a carriage return overwrites what the line said; a bidirectional override
shows the text in another order than it is. Each of them is shown instead as a visible escape:
`\\x1b`, `\\x9b`, `\\r`, `\\u202e` (Python's notation), so what the person reads is what the record
holds, character for character, and nothing in it acts on their terminal.

- `safe(text)`: every C0 control (newline and tab included: one field, one line), DEL, every C1
  control, the line and paragraph separators and the bidirectional controls escaped;
- `safe_lines(text)`: the same, but the newlines kept (a text of several lines this program made,
  with values from elsewhere inside);
- `safe_json(text)`: JSON as `json.dumps(..., ensure_ascii=False)` writes it (C0 already escaped
  in its strings, its layout kept) with the rest escaped as `\\uNNNN`: still the same JSON value.
"""

from __future__ import annotations

import re

# C0 and DEL, C1, the line/paragraph separators, the bidirectional embeddings, overrides and
# isolates (and the marks that steer them).
_NOT_C0 = "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_ANY = re.compile(f"[\x00-\x1f{_NOT_C0}]")
# In JSON text a raw C0 character is layout (json.dumps escapes those in strings): kept.
_IN_JSON = re.compile(f"[{_NOT_C0}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def safe(text: object) -> str:
    """`text` (str() of it) with every control shown as an escape, on one line."""
    return _ANY.sub(_escape, str(text))


def safe_lines(text: object) -> str:
    """`text` with every control shown as an escape but its newlines, which stay."""
    return "\n".join(safe(line) for line in str(text).split("\n"))


def safe_json(text: str) -> str:
    """A JSON text with its raw controls (C1, separators, bidi) written as `\\uNNNN`."""
    return _IN_JSON.sub(_json_escape, text)
