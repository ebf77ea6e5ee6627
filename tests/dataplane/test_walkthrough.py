"""README.md as a tested document: every ```sh block of it runs, in order, in one bash
session on a fresh cloud (dataplane on, as root), so a README that drifts fails here.

The session is a new user's second shell: the working directory stands for the clone
(`.venv`, `.venv-ansible` and the cloud's `.stackling` in it), HOME is a fresh folder
(its ~/.ssh is the README's), no OS_* or STACKLING_* variables, and `make` runs in the
clone. A ```yaml block is written to the file the line before it names (`web.yaml`:).
Blocks the README marks `<!-- not run: why -->` (serving in the foreground, the whole
suite) are skipped and listed; this test starts the cloud `make run` would serve.

`openstack` is the real CLI forked from a warm process (tests/openstack_cli.py, as in the
client tests), a shell function like `make`: the same argv, environment, working directory
and stdio, without its second of imports per command; its `--wait` loops look every 0.1 s.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.dataplane.conftest import DataplaneCloud

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
OPENSTACK_CLI = ROOT / "tests" / "openstack_cli.py"
NOT_RUN = re.compile(r"^<!-- not run: (.*) -->$")
FILE_NAME = re.compile(r"`([\w.-]+\.ya?ml)`:$")


@dataclass
class Block:
    line: int  # where its fence opens in README.md
    language: str
    text: str
    not_run: str | None = None  # why, as the README says
    file: str | None = None  # a yaml block's file name


def readme_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)$", lines[i])
        if not fence:
            i += 1
            continue
        end = lines.index("```", i + 1)
        before = [line for line in lines[max(0, i - 3):i] if line.strip()]
        block = Block(i + 1, fence.group(1), "\n".join(lines[i + 1:end]) + "\n")
        if before and (why := NOT_RUN.match(before[-1])):
            block.not_run = why.group(1)
        if before and (name := FILE_NAME.search(before[-1])):
            block.file = name.group(1)
        blocks.append(block)
        i = end + 1
    return blocks


def test_readme_blocks_are_found() -> None:
    blocks = readme_blocks(README.read_text())
    shell = [b for b in blocks if b.language == "sh"]
    placeholders = [(b.line, line) for b in shell if not b.not_run
                    for line in b.text.splitlines()
                    if not line.lstrip().startswith("#")
                    and re.search(r"<[a-z][\w -]*>", line.split(" #")[0])]
    assert len(shell) > 10 and not placeholders, placeholders
    assert {b.file for b in blocks if b.language == "yaml"} >= {"web.yaml", "site.yml"}
    # the few not run, each with its reason in the README
    assert 1 <= len([b for b in shell if b.not_run]) <= 3


def session_script(blocks: list[Block], work: Path, cli_socket: Path) -> str:
    out = ["set -eo pipefail", f"make() {{ command make -C {ROOT} \"$@\"; }}",
           f"openstack() {{ {sys.executable} -I -S {OPENSTACK_CLI} --connect {cli_socket} \"$@\"; }}",
           f"cd {work}"]
    for block in blocks:
        if block.language == "sh" and not block.not_run:
            out += [f"echo '### README.md line {block.line}'", "set -x", block.text, "set +x"]
    return "\n".join(out) + "\necho '### README.md: every block ran'\n"


@pytest.fixture
def short_home() -> Iterator[Path]:
    """A HOME as short as a user's: OpenSSH's ControlPath under ~/.ansible/cp must fit a unix
    socket's 108 bytes, which under pytest's tmp_path it does not."""
    home = Path(tempfile.mkdtemp(prefix="sl-home-"))
    yield home
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def cli_socket() -> Iterator[Path]:
    """The socket of a warm `openstack` (tests/openstack_cli.py --serve), stopped after."""
    folder = Path(tempfile.mkdtemp(prefix="sl-osc-"))  # a unix socket's path: 108 bytes
    path = folder / "cli.sock"
    proc = subprocess.Popen([sys.executable, str(OPENSTACK_CLI), "--serve", str(path)],
                            cwd=ROOT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not path.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # it listens before its imports: a command waits for them
        assert path.exists(), f"the warm openstack CLI did not start ({proc.poll()})"
        yield path
    finally:  # the warm process and any command of it still running
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


# eight guests, three moves and an Ansible run: minutes, more on a loaded machine
@pytest.mark.timeout(1800)
def test_readme_runs_as_printed(dataplane_cloud: DataplaneCloud, tmp_path: Path,
                                short_home: Path, cli_socket: Path) -> None:
    dp = dataplane_cloud
    work, home = tmp_path / "clone", short_home
    work.mkdir()
    (home / ".ssh").mkdir(parents=True)
    for name in (".venv", ".venv-ansible"):
        (work / name).symlink_to(ROOT / name)
    (work / ".stackling").symlink_to(dp.cloud.data_dir)
    blocks = readme_blocks(README.read_text())
    for block in blocks:
        if block.file:
            (work / block.file).write_text(block.text)
    skipped = [f"README.md line {b.line}: {b.not_run}" for b in blocks if b.not_run]
    print("README blocks not run:\n  " + "\n  ".join(skipped))

    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OS_", "STACKLING_", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), PATH="/usr/sbin:/usr/bin:/sbin:/bin")
    log = tmp_path / "readme.log"
    with log.open("w") as fh:
        proc = subprocess.Popen(["bash", "-c", session_script(blocks, work, cli_socket)], cwd=work,
                                env=env, stdin=subprocess.DEVNULL, stdout=fh,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(1800)
        finally:  # what a failed block left running in the background (the proxy)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
    text = log.read_text(errors="replace")
    assert proc.returncode == 0 and text.rstrip().endswith("every block ran"), \
        text[-6000:] + dp.cloud.log_tail(3000)
    outputs = text.splitlines()
    # the printed answers
    assert "vm2" in outputs, text[-4000:]
    assert "0 finding(s)" in outputs, text[-4000:]
    moves = "\n".join(line for line in outputs if "migrat" in line or "400" in line)
    assert text.count("cannot reach") >= 2, moves  # both refused moves
    assert "web1 | CHANGED | rc=0 >>" in text, text[-4000:]  # Ansible through the inventory
    assert "hello from web1" in outputs, text[-4000:]  # curl through the SOCKS5 proxy
