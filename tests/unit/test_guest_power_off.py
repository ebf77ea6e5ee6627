"""Which signal asks a guest's init to power off (guests.HALT_SIGNALS), read from what the
process blocks or catches; and the wait on its end."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from stackling.dataplane import guests

# a process that says it is ready once its signal mask and handlers are in place
BLOCKS = ("import signal, sys, time\n"
          "signal.pthread_sigmask(signal.SIG_BLOCK, {%s})\n"
          "print('ready', flush=True)\n"
          "time.sleep(60)\n")
CATCHES = ("import signal, sys, time\n"
           "signal.signal(%s, lambda *_: None)\n"
           "print('ready', flush=True)\n"
           "time.sleep(60)\n")


def _halt_of(code: str) -> int | None:
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        return guests._halt_signal(proc.pid)
    finally:
        proc.kill()
        proc.wait()


def test_systemd_is_asked_with_sigrtmin_4_and_another_init_with_sigpwr() -> None:
    # systemd reads its signals from a signalfd: they are blocked, not caught
    rtmin4 = int(signal.SIGRTMIN) + 4
    assert _halt_of(BLOCKS % f"{rtmin4}, signal.SIGPWR") == rtmin4
    assert _halt_of(CATCHES % "signal.SIGPWR") == signal.SIGPWR  # sysvinit, busybox init
    assert _halt_of(CATCHES % "signal.SIGUSR2") == signal.SIGUSR2  # busybox init's poweroff
    # an init that listens for none of them cannot hear any: killed at once
    assert _halt_of(CATCHES % "signal.SIGHUP") is None
    assert guests._halt_signal(2 ** 22 + 1) is None  # (no such process)


def test_the_wait_on_a_process_ends_when_it_does_or_at_the_bound() -> None:
    proc = subprocess.Popen(["sleep", "60"])
    try:
        started = time.monotonic()
        assert not guests._wait_exit(proc.pid, 0.2)
        assert time.monotonic() - started >= 0.2
        proc.kill()
        assert guests._wait_exit(proc.pid, 30)
    finally:
        proc.kill()
        proc.wait()
    assert guests._wait_exit(proc.pid, 1)  # (gone: nothing to wait for)


def test_the_kit_init_is_never_asked(tmp_path: Path) -> None:
    g = guests.Guests(tmp_path, tmp_path / "kit", tmp_path / "console")
    gdir = tmp_path / "guests" / "s1"
    gdir.mkdir(parents=True)
    (gdir / "kit-init").touch()
    assert g.ask_power_off("s1") is None
    (gdir / "halt").write_text("12.5 38")  # asked before (this process or the last one)
    assert g.ask_power_off("s1") == 12.5
