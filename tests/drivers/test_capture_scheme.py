from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# A fresh interpreter: the point is that a `capture://` port in a config opens through the
# transport alone, without anything having imported drivers.capture first.
SCRIPT = """
import sys
import serial
import drivers.transport
assert "drivers.capture" not in sys.modules
port = serial.serial_for_url(sys.argv[1], timeout=0.2)
port.write(bytes.fromhex("00"))
port.close()
print(type(port).__module__)
"""


def test_capture_url_opens_through_the_transport_alone(tmp_path: Path) -> None:
    capture = tmp_path / "bell.jsonl"
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, f"capture://sim://timer_bell#{capture}"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "drivers.capture"
    records = [json.loads(line) for line in capture.read_text().splitlines()]
    sent = [record["hex"] for record in records if record.get("dir") == "tx"]
    assert sent == ["00"]
