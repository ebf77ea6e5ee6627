"""EC2 request signatures, checked the way Keystone's /v3/ec2tokens checks them: the
client forwards what it signed (verb, host, path, params, headers, body hash) and its
signature; the server signs the same with the stored secret and compares.

Versions 0, 1 and 2 (`SignatureVersion` in params) and 4 (AWS4-HMAC-SHA256 in the
Authorization header or the X-Amz-Algorithm param), per AWS's published algorithms."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
from typing import Any
from urllib.parse import quote

V4 = "AWS4-HMAC-SHA256"


class SignatureError(ValueError):
    pass


def _b64_hmac(secret: bytes, text: str, digest: Any) -> str:
    return base64.b64encode(hmac.new(secret, text.encode(), digest).digest()).decode()


def _quote(value: Any) -> str:
    return quote(str(value), safe="-_.~")


def _canonical_query(params: dict[str, Any], skip: str) -> str:
    return "&".join(f"{_quote(k)}={_quote(params[k])}" for k in sorted(params) if k != skip)


def _is_v4(headers: dict[str, str], params: dict[str, Any]) -> bool:
    return str(headers.get("Authorization", "")).startswith(V4) or params.get(
        "X-Amz-Algorithm") == V4


def _auth_param(headers: dict[str, str], params: dict[str, Any], name: str) -> str:
    auth = headers.get("Authorization")
    if auth is not None:
        return auth.partition(f"{name}=")[2].split(",")[0].strip()
    return str(params.get(f"X-Amz-{name}") or "")


def _v4(secret: bytes, creds: dict[str, Any], headers: dict[str, str],
        params: dict[str, Any]) -> str:
    lower = {k.lower().strip(): str(v).strip() for k, v in headers.items()}
    signed = _auth_param(headers, params, "SignedHeaders")
    canonical_headers = "".join(f"{h}:{lower[h]}\n" for h in signed.split(";") if h in lower)
    verb = str(creds.get("verb", "")).upper()
    query = "" if verb == "POST" else _canonical_query(params, "X-Amz-Signature")
    request = "\n".join((verb, str(creds.get("path", "")), query, canonical_headers, signed,
                         str(creds.get("body_hash", ""))))
    scope_parts = _auth_param(headers, params, "Credential").split("/")
    if len(scope_parts) != 5:
        raise SignatureError("malformed credential scope")
    date = headers.get("X-Amz-Date") or str(params.get("X-Amz-Date") or "")
    if not date.startswith(scope_parts[1]):
        raise SignatureError("Request date mismatch error")
    scope = "/".join(scope_parts[1:])
    to_sign = "\n".join((V4, date, scope, hashlib.sha256(request.encode()).hexdigest()))
    key = b"AWS4" + secret
    for part in scope_parts[1:]:
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def signature(secret: str, creds: dict[str, Any], host: str | None = None) -> str:
    """The signature of the request described by `creds` under `secret`."""
    params = creds.get("params") or {}
    headers = creds.get("headers") or {}
    if not isinstance(params, dict) or not isinstance(headers, dict):
        raise SignatureError("params and headers must be objects")
    key = secret.encode()
    if _is_v4(headers, params):
        return _v4(key, creds, headers, params)
    version = str(params.get("SignatureVersion", ""))
    if version == "0":
        return _b64_hmac(key, f"{params.get('Action', '')}{params.get('Timestamp', '')}",
                         hashlib.sha1)
    if version == "1":
        text = "".join(f"{k}{params[k]}" for k in sorted(params, key=str.lower)
                       if k != "Signature")
        return _b64_hmac(key, text, hashlib.sha1)
    if version == "2":
        digest = hashlib.sha256 if params.get("SignatureMethod") == "HmacSHA256" else hashlib.sha1
        text = "\n".join((str(creds.get("verb", "")), host if host is not None else
                          str(creds.get("host", "")), str(creds.get("path", "")),
                          _canonical_query(params, "Signature")))
        return _b64_hmac(key, text, digest)
    raise SignatureError(f"Unknown signature version: {version}")


def verify(secret: str, creds: dict[str, Any]) -> bool:
    """Whether the forwarded signature matches; as Keystone, a v2 signature made over the
    host without its port also passes."""
    given = str(creds.get("signature") or "")
    if not given:
        return False
    hosts: list[str | None] = [None]
    host = str(creds.get("host") or "")
    if ":" in host:
        hosts.append(host.split(":")[0])
    for candidate in hosts:
        try:
            if hmac.compare_digest(signature(secret, creds, candidate).encode(), given.encode()):
                return True
        except SignatureError:
            return False
    return False


def s3_signature(secret: str, string_to_sign: bytes) -> str:
    """An S3 request's signature over the string it signed: HMAC-SHA1 (base64), or AWS's
    version 4 (hex) when that string is one (`AWS4-HMAC-SHA256`, a `…/s3/aws4_request`
    scope)."""
    if string_to_sign[:4] != b"AWS4":
        return base64.b64encode(hmac.new(secret.encode(), string_to_sign,
                                         hashlib.sha1).digest()).decode()
    parts = string_to_sign.split(b"\n")
    if len(parts) != 4 or parts[0] != V4.encode():
        raise SignatureError("not an AWS4 string to sign")
    scope = parts[2].split(b"/")
    if len(scope) != 4 or scope[2] != b"s3" or scope[3] != b"aws4_request":
        raise SignatureError("not an S3 scope")
    key = b"AWS4" + secret.encode()
    for part in scope:
        key = hmac.new(key, part, hashlib.sha256).digest()
    return hmac.new(key, string_to_sign, hashlib.sha256).hexdigest()


def s3_verify(secret: str, creds: dict[str, Any]) -> bool:
    """Whether an S3 token request's signature matches: `token` is the base64 of the string
    the client signed (Keystone's /v3/s3tokens)."""
    given = creds.get("signature")
    if not isinstance(given, str) or not given:
        return False
    try:
        to_sign = base64.urlsafe_b64decode(str(creds.get("token", "")))
        expected = s3_signature(secret, to_sign)
    except (ValueError, SignatureError):
        return False
    return hmac.compare_digest(expected.encode(), given.encode())


def check_timestamp(creds: dict[str, Any], ttl: dt.timedelta, now: dt.datetime) -> str | None:
    """Why the signed request is too old, or None: it is good for `ttl` after its timestamp
    (params `Timestamp`, else `X-Amz-Date` in headers or params); one without a timestamp
    was signed so on purpose (as Keystone)."""
    params = creds.get("params") or {}
    headers = creds.get("headers") or {}
    stamp = params.get("Timestamp") or headers.get("X-Amz-Date") or params.get("X-Amz-Date")
    if not stamp:
        return None
    when = _parse(stamp)
    if when is None:
        return f"Credential timestamp is invalid: {stamp}"
    return "Credential is expired" if now > when + ttl else None


def _parse(value: Any) -> dt.datetime | None:
    for fmt in ("%Y%m%dT%H%M%SZ", "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ",
                "%Y-%m-%dT%H:%M:%S"):
        try:
            return dt.datetime.strptime(str(value), fmt).replace(tzinfo=dt.UTC)
        except ValueError:
            continue
    return None
