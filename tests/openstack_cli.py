"""The real `openstack` CLI for tests, without paying its start-up on every command.

One warm process per test worker imports python-openstackclient and every plugin it may
load (about 0.6 s of imports, most of a short command's time), then forks a child per
command. Each child is its own process, as `.venv/bin/openstack` would be: its own
environment, working directory, stdout/stderr and exit code, and `openstackclient.shell.main`
(what the console script calls) runs in it unchanged.

The clients' status loops (`--wait` of osc, heatclient's event poll, openstacksdk's waits,
here and in the tests' own process) look every 0.1 s rather than upstream's 2-5 s: the same
loops waiting on the same conditions, with shorter naps between looks.
`STACKLING_TEST_CLIENT_POLL` sets another interval (e.g. 5 for upstream's).

Run as a script, it is that warm process: one JSON request per line on stdin, one JSON
answer per line on stdout. `--serve SOCKET` makes it serve a unix socket instead, and
`--connect SOCKET ARGS...` is the matching `openstack ARGS...` for a shell (the README
walkthrough's): a small process that hands the warm one its argv, environment, working
directory and its own stdin/stdout/stderr (the child writes to them directly, so pipes and
`$(...)` work as with the console script) and exits with the command's status.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path
from typing import Any

POLL = float(os.environ.get("STACKLING_TEST_CLIENT_POLL", "0.1"))


class Zygote:
    """The warm process, started on the first command (one per pytest worker)."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None
        self.lock = threading.Lock()

    def _start(self) -> subprocess.Popen[bytes]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, cwd=self.cwd)
        return self.proc

    def run(self, argv: list[str], env: dict[str, str], timeout: float
            ) -> subprocess.CompletedProcess[str]:
        """`openstack *argv` with `env`: its exit code, stdout and stderr."""
        with self.lock, tempfile.TemporaryDirectory(prefix="osc-") as tmp:
            out, err = Path(tmp) / "out", Path(tmp) / "err"
            request = {"argv": argv, "env": env, "cwd": str(self.cwd), "out": str(out),
                       "err": str(err), "timeout": int(timeout)}
            line = self._ask(request) or self._ask(request)  # once more in a new one if it died
            if not line:
                raise RuntimeError(f"the CLI's warm process died twice (exit {self.proc.poll()})")
            rc = json.loads(line)["rc"]
            return subprocess.CompletedProcess(["openstack", *argv], rc,
                                               out.read_text(errors="replace"),
                                               err.read_text(errors="replace"))

    def _ask(self, request: dict[str, Any]) -> bytes:
        """The warm process's answer line, or b"" if it is gone."""
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(request).encode() + b"\n")
            proc.stdin.flush()
        except BrokenPipeError:
            proc.wait()
            return b""
        return proc.stdout.readline()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()  # the warm process ends at end of input
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def shorten_sdk_polls() -> None:
    """openstacksdk's waits (`wait_for_server`, the cloud layer's `wait=True`) look every
    POLL seconds at most; their conditions and timeouts are unchanged."""
    from openstack import utils

    original = utils.iterate_timeout
    if getattr(original, "shortened", False):
        return

    def iterate_timeout(timeout: Any, message: str, wait: Any = 2) -> Any:
        return original(timeout, message, wait=POLL if wait is None else min(float(wait), POLL))

    iterate_timeout.shortened = True  # type: ignore[attr-defined]
    utils.iterate_timeout = iterate_timeout


# ------------------------------------------------------------------ the warm process
def _warm() -> Any:
    from importlib.metadata import distributions

    from cliff import command
    from heatclient.common import event_utils
    from openstackclient import shell
    from osc_lib import utils

    for dist in distributions():
        for ep in dist.entry_points:
            if ep.group.startswith(("openstack.", "cliff.", "keystoneauth1.")):
                try:
                    ep.load()
                except Exception:  # noqa: S112 - a plugin the CLI itself would skip
                    continue
    command._get_distributions_by_modules()  # cliff's module -> distribution map, cached
    _shorten(utils.wait_for_status, "sleep_time")
    _shorten(utils.wait_for_delete, "sleep_time")
    _shorten(event_utils.poll_for_events, "poll_period")
    shorten_sdk_polls()
    return shell


def _shorten(func: Any, name: str) -> None:
    """Set the default of keyword `name` of `func` to POLL (callers leave it unset)."""
    code = func.__code__
    names = code.co_varnames[:code.co_argcount]
    defaults = list(func.__defaults__)
    defaults[names.index(name) - (len(names) - len(defaults))] = POLL
    func.__defaults__ = tuple(defaults)


def _child(shell: Any, request: dict[str, Any], fds: tuple[int, int, int] | None = None
           ) -> int:
    """Run one command; its stdin/stdout/stderr are `fds`, else /dev/null and the request's
    two files."""
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    if fds is None:
        fds = (os.open(os.devnull, os.O_RDONLY),
               os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
               os.open(request["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    signal.alarm(request["timeout"])  # a hung command dies as subprocess.run's timeout would
    sys.argv = [sys.argv[0], *request["argv"]]
    try:
        rc = shell.main(request["argv"])
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    return int(rc or 0)


def _serve(path: str) -> None:
    """Fork a child per connection to `path`: one request and three fds in, a status out."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        server.listen(16)  # a command that comes during the warm-up waits for it
        shell = _warm()
        while True:
            conn, _ = server.accept()
            if os.fork() != 0:
                conn.close()
                continue
            code = 1
            try:
                server.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
                while chunk := conn.recv(1 << 16):  # the rest of a long request
                    data += chunk
                code = _child(shell, json.loads(data), (fds[0], fds[1], fds[2]))
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stderr.flush()
                with contextlib.suppress(OSError):
                    conn.sendall(b"%d\n" % (code & 0xFF))
                os._exit(code & 0xFF)


def _connect(path: str, argv: list[str]) -> int:
    """`openstack *argv` run by the warm process serving `path`; its exit status."""
    request = {"argv": argv, "env": dict(os.environ), "cwd": os.getcwd(), "timeout": 600}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(path)
        data = json.dumps(request).encode()
        sent = socket.send_fds(conn, [data[:1 << 16]], [0, 1, 2])
        conn.sendall(data[sent:])
        conn.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := conn.recv(64):
            answer += chunk
    return int(answer or b"1")


def main() -> None:
    if sys.argv[1:2] == ["--connect"]:
        raise SystemExit(_connect(sys.argv[2], sys.argv[3:]))
    serve = sys.argv[2] if sys.argv[1:2] == ["--serve"] else None
    sys.path.pop(0)  # this file's folder (tests/) is not on the console script's path
    # as the console script's: cliff names the program from it when imported
    sys.argv = [str(Path(sys.executable).parent / "openstack")]
    if serve:
        _serve(serve)
        return
    shell = _warm()
    for line in sys.stdin.buffer:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(shell, request)
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stderr.flush()
                os._exit(code & 0xFF)
        _, status = os.waitpid(pid, 0)
        answer = json.dumps({"rc": os.waitstatus_to_exitcode(status)}).encode() + b"\n"
        sys.stdout.buffer.write(answer)
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
