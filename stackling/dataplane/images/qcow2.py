"""qcow2 images through Debian's qemu-utils: checked, then converted to a sparse raw file.

qemu-img reads untrusted bytes here, so it runs under an address-space and CPU limit (as
Nova's `qemu-img info` does), and an image naming a backing or external data file is
refused: either would make this cloud read a file of the machine's into a guest.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from stackling.dataplane.images.errors import Refused

LIMITS = ["prlimit", "--as=1073741824", "--cpu=60", "--"]


def _qemu_img(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LIMITS, "qemu-img", *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def _first_line(text: str) -> str:
    """The line that says what is wrong: qemu-img check's first `ERROR ...`, else the
    first that names an error, else the first."""
    lines = [line.strip().removeprefix("qemu-img: ") for line in text.splitlines()]
    lines = [line for line in lines if line]
    found = next((line for line in lines if line.startswith("ERROR")), None)
    found = found or next((line for line in lines if "error" in line.lower()), None)
    return found or (lines[0] if lines else "no output")


def check(path: Path) -> int:
    """The image's virtual size, once `qemu-img check` finds it sound (leaked clusters are
    harmless and allowed; corruption or an unreadable header is refused)."""
    info = _qemu_img("info", "--output=json", "-f", "qcow2", str(path))
    if info.returncode != 0:
        raise Refused(f"is not a readable qcow2: {_first_line(info.stderr or info.stdout)}")
    try:
        meta = json.loads(info.stdout)
    except ValueError:
        raise Refused("is not a readable qcow2: qemu-img info said no JSON") from None
    if meta.get("backing-filename") or meta.get("full-backing-filename"):
        raise Refused(f"is a qcow2 with a backing file ({meta.get('backing-filename')}): "
                      "not allowed")
    data_file = ((meta.get("format-specific") or {}).get("data") or {}).get("data-file")
    if data_file:
        raise Refused(f"is a qcow2 with an external data file ({data_file}): not allowed")
    result = _qemu_img("check", "-f", "qcow2", str(path), timeout=600)
    if result.returncode not in (0, 3):  # 3: leaked clusters only
        raise Refused(f"is a corrupt qcow2: {_first_line(result.stdout + result.stderr)}")
    return int(meta.get("virtual-size") or 0)


def to_raw(source: Path, target: Path) -> None:
    """Convert to a sparse raw file (zeros are holes), written at `target`."""
    result = _qemu_img("convert", "-q", "-f", "qcow2", "-O", "raw", "-S", "4k",
                       str(source), str(target), timeout=3600)
    if result.returncode != 0:
        target.unlink(missing_ok=True)
        raise Refused(f"is a corrupt qcow2: {_first_line(result.stderr or result.stdout)}")
