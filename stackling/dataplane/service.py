"""The dataplane's loop in a serving process: hold the lease, reconcile after each write
transaction of this process (and every `resync_interval` seconds, for the other workers'
writes), and tear everything down at a clean stop."""

from __future__ import annotations

import logging
import threading
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session

from stackling.common.db import Database
from stackling.config import Settings
from stackling.dataplane import lease
from stackling.dataplane.names import cloud_prefix
from stackling.dataplane.reconciler import Reconciler

LOG = logging.getLogger(__name__)


class DataplaneLoop:
    def __init__(self, settings: Settings, ready: threading.Event | None = None) -> None:
        self.settings = settings
        self.ready = ready  # set once the serving process's models are all mapped
        self.database = Database(settings.db_url)
        # the settings the services' rules read where no runtime is (network.dns_domain)
        self.database.sessions.kw.setdefault("info", {})["stackling.settings"] = settings
        self.prefix = cloud_prefix(settings.db_url)
        self.reconciler = Reconciler(self.database, self.prefix, settings.data_dir.resolve(),
                                     settings.dataplane.guest_processes,
                                     settings.dataplane.shutdown_timeout)
        self.reconciler.wake = lambda: self.wake.set()
        self.holder = lease.holder_name()
        self.owner = False
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.passes = 0
        self.thread = threading.Thread(target=self._run, name="dataplane", daemon=True)
        self.heartbeat = threading.Thread(target=self._renew, name="dataplane-lease",
                                          daemon=True)

    def start(self) -> None:
        event.listen(Session, "after_flush", self._wrote)
        event.listen(Session, "after_commit", self._committed)
        self.thread.start()
        self.heartbeat.start()

    def _renew(self) -> None:
        """Renew the lease every third of its TTL while this process owns it, whatever a
        pass is doing: a pass longer than the TTL (a start from nothing on a busy machine)
        must not let another worker take over in its middle, with two programming the
        kernel at once."""
        ttl = self.settings.dataplane.lease_ttl
        while not self.stopping.wait(ttl / 3):
            if not self.owner:
                continue
            try:
                if not lease.try_acquire(self.database, self.holder, ttl):
                    LOG.warning("dataplane: this process (%s) lost the lease", self.holder)
            except Exception:  # noqa: BLE001 - the next renewal tries again
                LOG.exception("dataplane lease renewal failed")

    def _wrote(self, session: Session, *_: Any) -> None:
        if threading.current_thread() is not self.thread:
            session.info["dataplane.wake"] = True

    def _committed(self, session: Session) -> None:
        if session.info.pop("dataplane.wake", False):
            self.wake.set()

    def _run(self) -> None:
        ttl, interval = self.settings.dataplane.lease_ttl, self.settings.dataplane.resync_interval
        while self.ready is not None and not self.ready.wait(0.1):
            if self.stopping.is_set():
                return
        while not self.stopping.is_set():
            self.wake.clear()
            try:
                owner = lease.try_acquire(self.database, self.holder, ttl)
                if owner and not self.owner:
                    LOG.warning("dataplane: this process (%s) owns cloud %s's kernel objects",
                                self.holder, self.prefix)
                if not owner and self.owner:
                    self.reconciler.metadata.stop_all()
                self.owner = owner
                if owner:
                    converged = self.reconciler.reconcile()
                    self.passes += 1
                    if not converged:
                        self.wake.wait(min(interval, 0.5))  # per-object retry, soon
                        continue
            except Exception:  # noqa: BLE001 - the next pass starts from scratch, soon
                LOG.exception("dataplane pass failed")
                self.wake.wait(min(interval, 0.5))
                continue
            self.wake.wait(interval)

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()
        self.thread.join(timeout=60)
        self.heartbeat.join(timeout=10)
        event.remove(Session, "after_flush", self._wrote)
        event.remove(Session, "after_commit", self._committed)
        if self.owner:
            try:
                self.reconciler.teardown()
                lease.release(self.database, self.holder)
            except Exception:  # noqa: BLE001 - a stop must finish
                LOG.exception("dataplane teardown failed")
        self.database.dispose()
