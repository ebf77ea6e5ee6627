"""Signed, expiring, revocable tokens.

A token is a Fernet-encrypted compact JSON payload (user, scope, effective role names,
audit ids, issue and expiry times). Keys live in the database, so every process sharing
it accepts every other's tokens. Validation is local crypto plus one indexed query for
revocation events, so a revoked token is refused by every process at once.

A validated token is remembered by its process (`TokenCache`) for its remaining lifetime,
at most CACHE_SECONDS: a request with it then reads only the newest revocation event's id
(one primary-key look-up, the request's only identity statement still). Any new event,
from any process, changes that id, and the token is checked in full again; so revocation
still takes effect at once everywhere. Trust and application-credential tokens, whose
validity also lives in other rows, are checked in full every time.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from sqlalchemy import bindparam, func, or_, select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.errors import Unauthorized
from stackling.identity import app_credential_state, trust_state
from stackling.identity.models import RevocationEvent, SigningKey

TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def format_time(value: dt.datetime) -> str:
    """Keystone's token time format: six fractional digits and a literal Z."""
    return value.astimezone(dt.UTC).strftime(TIME_FORMAT)


def new_audit_id() -> str:
    return base64.urlsafe_b64encode(secrets.token_bytes(16)).decode().rstrip("=")[:22]


@dataclass
class TokenData:
    user_id: str
    methods: list[str]
    issued_at: dt.datetime
    expires_at: dt.datetime
    audit_ids: list[str]
    project_id: str | None = None
    domain_id: str | None = None  # domain scope
    system: str | None = None  # "all"
    roles: list[str] = field(default_factory=list)  # effective role names
    user_domain_id: str | None = None
    project_domain_id: str | None = None
    user_name: str | None = None
    project_name: str | None = None
    app_cred_id: str | None = None  # issued by the application_credential method
    trust_id: str | None = None  # a trust-scoped token (OS-TRUST)

    def to_payload(self) -> bytes:
        data = {
            "u": self.user_id, "m": self.methods, "i": self.issued_at.timestamp(),
            "e": self.expires_at.timestamp(), "a": self.audit_ids, "p": self.project_id,
            "d": self.domain_id, "s": self.system, "r": self.roles, "ud": self.user_domain_id,
            "pd": self.project_domain_id, "un": self.user_name, "pn": self.project_name,
        }
        if self.app_cred_id:
            data["ac"] = self.app_cred_id
        if self.trust_id:
            data["t"] = self.trust_id
        return json.dumps(data, separators=(",", ":")).encode()

    @classmethod
    def from_payload(cls, raw: bytes) -> TokenData:
        d = json.loads(raw)
        return cls(
            user_id=d["u"], methods=d["m"],
            issued_at=dt.datetime.fromtimestamp(d["i"], dt.UTC),
            expires_at=dt.datetime.fromtimestamp(d["e"], dt.UTC),
            audit_ids=d["a"], project_id=d.get("p"), domain_id=d.get("d"), system=d.get("s"),
            roles=d.get("r") or [], user_domain_id=d.get("ud"),
            project_domain_id=d.get("pd"), user_name=d.get("un"), project_name=d.get("pn"),
            app_cred_id=d.get("ac"), trust_id=d.get("t"),
        )

    def context(self, token: str, request_id: str) -> RequestContext:
        return RequestContext(
            user_id=self.user_id, user_name=self.user_name, user_domain_id=self.user_domain_id,
            project_id=self.project_id, project_name=self.project_name,
            project_domain_id=self.project_domain_id, domain_id=self.domain_id,
            system_scope=self.system, roles=tuple(self.roles), auth_token=token,
            audit_id=self.audit_ids[0], expires_at=format_time(self.expires_at),
            request_id=request_id,
        )


class KeyRing:
    """Process cache of the signing keys; reloaded from the database on a miss."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fernet: MultiFernet | None = None

    def _load(self, db: Session) -> MultiFernet:
        keys = list(db.scalars(select(SigningKey.key).order_by(SigningKey.id.desc())))
        if not keys:
            raise RuntimeError("no signing keys: the identity bootstrap has not run")
        fernet = MultiFernet([Fernet(k.encode()) for k in keys])
        with self._lock:
            self._fernet = fernet
        return fernet

    def encrypt(self, db: Session, payload: bytes) -> str:
        fernet = self._fernet or self._load(db)
        return fernet.encrypt(payload).decode().rstrip("=")

    def decrypt(self, db: Session, token: str) -> bytes:
        padded = (token + "=" * (-len(token) % 4)).encode()
        fernet = self._fernet or self._load(db)
        try:
            return fernet.decrypt(padded)
        except InvalidToken:
            # Perhaps another process rotated keys: reload once, then give up.
            return self._load(db).decrypt(padded)


def create_signing_key(db: Session) -> None:
    db.add(SigningKey(key=Fernet.generate_key().decode()))


def issue(db: Session, keys: KeyRing, data: TokenData) -> str:
    return keys.encrypt(db, data.to_payload())


def _check_revoked(db: Session, data: TokenData) -> bool:
    revoked, last = _revoked(db, data, with_last=True)
    db.info["identity.last_revocation"] = last  # for the cache of authenticate
    return revoked


def decode(db: Session, keys: KeyRing, token: str, *, allow_expired_window: int = 0) -> TokenData:
    """The token's data; Unauthorized when forged, expired or revoked."""
    if not token or len(token) > 2048:
        raise Unauthorized()
    try:
        data = TokenData.from_payload(keys.decrypt(db, token))
    except (InvalidToken, ValueError, KeyError, TypeError):
        raise Unauthorized() from None
    now = dt.datetime.now(dt.UTC)
    if data.expires_at + dt.timedelta(seconds=allow_expired_window) <= now:
        raise Unauthorized("The request you have made requires authentication.")
    if _check_revoked(db, data):
        raise Unauthorized()
    if data.app_cred_id and not app_credential_state.still_valid(db, data.app_cred_id):
        raise Unauthorized()
    if data.trust_id:
        trustor = trust_state.trustor_if_valid(db, data.trust_id)
        if trustor is None:
            raise Unauthorized()  # the trust was deleted or expired: its tokens end with it
        # what revokes the trustor's tokens (a grant or membership gone, the trustor
        # disabled) revokes the trust's, whoever holds them
        if trustor != data.user_id and is_revoked(db, dataclasses.replace(data, user_id=trustor)):
            raise Unauthorized()
    return data


def _revoked_statement(scoped: bool, audits: int) -> Any:
    """The revocation look-up for a token's shape (project-scoped or not, how many audit
    ids: one, or two for a rescoped token), built once: every request runs it."""
    ev = RevocationEvent
    audit = or_(*(ev.audit_id == bindparam(f"a{i}") for i in range(audits)))
    issued = ev.issued_before >= bindparam("issued_at")
    if scoped:
        user = (ev.user_id == bindparam("user_id")) & (
            ev.project_id.is_(None) | (ev.project_id == bindparam("project_id"))) & issued
        project = (ev.project_id == bindparam("project_id")) & ev.user_id.is_(None) & issued
        return select(ev.id).where(or_(audit, user, project)).limit(1)
    user = (ev.user_id == bindparam("user_id")) & ev.project_id.is_(None) & issued
    return select(ev.id).where(or_(audit, user)).limit(1)


_REVOKED: dict[tuple[bool, int, bool], Any] = {}
# The newest revocation event's id (0: none): ids only grow and events are never deleted,
# so a different answer means a new event.
_LAST_EVENT = select(func.coalesce(func.max(RevocationEvent.id), 0))


def _revoked(db: Session, data: TokenData, with_last: bool = False) -> tuple[bool, int]:
    """(revoked, the newest event's id read in the same statement when `with_last`)."""
    scoped = bool(data.project_id)
    audits = list(data.audit_ids) or [""]  # one, or two for a rescoped token (ours: signed)
    key = (scoped, len(audits), with_last)
    stmt = _REVOKED.get(key)
    if stmt is None:
        stmt = _revoked_statement(scoped, len(audits))
        if with_last:
            stmt = select(stmt.scalar_subquery(), _LAST_EVENT.scalar_subquery())
        _REVOKED[key] = stmt
    params: dict[str, Any] = {f"a{i}": a for i, a in enumerate(audits)}
    params.update(user_id=data.user_id, issued_at=data.issued_at)
    if scoped:
        params["project_id"] = data.project_id
    # On the connection: nothing is pending this early in a request (no autoflush to do),
    # and the ORM session's execute would double the cost of this one-row look-up.
    row = db.connection().execute(stmt, params).first()
    if not with_last:
        return row is not None, 0
    assert row is not None
    return row[0] is not None, row[1]


def is_revoked(db: Session, data: TokenData) -> bool:
    return _revoked(db, data)[0]


CACHE_SECONDS = 300  # keystonemiddleware's token_cache_time default
CACHE_SIZE = 4096


class TokenCache:
    """Validated tokens of this process: token -> (data, good until, newest event id
    when validated). Thread-safe enough by the GIL: one dict, get/set/pop only."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[TokenData, float, int]] = {}

    def get(self, db: Session, token: str) -> TokenData | None:
        entry = self._entries.get(token)
        if entry is None:
            return None
        data, until, last = entry
        if time.time() >= until or db.connection().execute(_LAST_EVENT).scalar() != last:
            self._entries.pop(token, None)  # expired, or a revocation since: check in full
            return None
        return data

    def put(self, token: str, data: TokenData, last: int) -> None:
        if len(self._entries) >= CACHE_SIZE:
            self._entries.clear()  # bounded; the next requests validate in full again
        self._entries[token] = (data, min(data.expires_at.timestamp(),
                                          time.time() + CACHE_SECONDS), last)


def revoke(db: Session, *, audit_id: str | None = None, user_id: str | None = None,
           project_id: str | None = None, expires_at: dt.datetime | None = None) -> None:
    db.add(RevocationEvent(audit_id=audit_id, user_id=user_id, project_id=project_id,
                           issued_before=dt.datetime.now(dt.UTC), expires_at=expires_at))


def authenticator(keys: KeyRing) -> Any:
    """The runtime's per-request validator: X-Auth-Token to RequestContext."""

    cache = TokenCache()

    def authenticate(db: Session, headers: Any, request_id: str) -> RequestContext:
        token = headers.get("x-auth-token")
        if not token:
            raise Unauthorized()
        data = cache.get(db, token)
        if data is None:
            data = decode(db, keys, token)
            if not (data.app_cred_id or data.trust_id):  # their validity lives elsewhere too
                cache.put(token, data, db.info.pop("identity.last_revocation"))
        ctx = data.context(token, request_id)
        if data.app_cred_id:
            ctx.access_rules = app_credential_state.access_rules_of(db, data.app_cred_id)
        return ctx

    return authenticate
