"""Keypairs: imported public keys or generated ed25519 pairs (x509: RSA certificates),
per user."""

from __future__ import annotations

import base64
import hashlib

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.listing import ListParams, Page, paginate
from stackling.compute.errors import InvalidKeypair, KeyPairExists, KeypairNotFound
from stackling.compute.models import KeyPair


def fingerprint(public_key: str) -> str:
    """Colon-separated MD5 of the key blob, as `ssh-keygen -l -E md5` and Nova print it."""
    # cryptography's SSH and ed25519 parts (~8 ms to import) only when keys are handled.
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization

    try:
        key = serialization.load_ssh_public_key(public_key.strip().encode())
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise InvalidKeypair(reason="failed to generate fingerprint") from None
    blob = key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    raw = base64.b64decode(blob.split()[1])
    digest = hashlib.md5(raw, usedforsecurity=False).hexdigest()
    return ":".join(digest[i:i + 2] for i in range(0, 32, 2))


def generate() -> tuple[str, str]:
    """A new (private OpenSSH PEM, public OpenSSH line) pair."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    private = ed25519.Ed25519PrivateKey.generate()
    private_pem = private.private_bytes(serialization.Encoding.PEM,
                                        serialization.PrivateFormat.OpenSSH,
                                        serialization.NoEncryption()).decode()
    public = private.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                               serialization.PublicFormat.OpenSSH).decode()
    return private_pem, public + " Generated-by-Nova"


def x509_fingerprint(pem: str) -> str:
    """Colon-separated SHA-1 of the certificate's DER form, as Nova's x509 fingerprint."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    try:
        cert = x509.load_pem_x509_certificate(pem.strip().encode())
    except (ValueError, TypeError) as err:
        raise InvalidKeypair(reason=f"failed to generate X509 fingerprint. Error message: "
                                    f"{err}") from None
    digest = cert.fingerprint(hashes.SHA1()).hex()  # noqa: S303 (the fingerprint Nova shows)
    return ":".join(digest[i:i + 2] for i in range(0, len(digest), 2))


def generate_x509(user_id: str) -> tuple[str, str]:
    """A new (private RSA PEM, self-signed certificate PEM) pair for WinRM, as Nova makes
    one: CN is the user, a client-auth certificate with the user's UPN, 10 years."""
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, user_id)])
    upn = ObjectIdentifier("1.3.6.1.4.1.311.20.2.3")  # Microsoft's user principal name
    upn_value = f"{user_id}@localhost".encode()
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(now + dt.timedelta(days=3650))
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), False)
            .add_extension(x509.SubjectAlternativeName([x509.OtherName(
                upn, b"\x0c" + bytes([len(upn_value)]) + upn_value)]), False)
            .sign(key, hashes.SHA256()))
    private_pem = key.private_bytes(serialization.Encoding.PEM,
                                    serialization.PrivateFormat.TraditionalOpenSSL,
                                    serialization.NoEncryption()).decode()
    return private_pem, cert.public_bytes(serialization.Encoding.PEM).decode()


def create_keypair(db: Session, user_id: str, name: str, public_key: str | None,
                   key_type: str = "ssh") -> tuple[KeyPair, str | None]:
    private = None
    if public_key is None:
        private, public_key = generate_x509(user_id) if key_type == "x509" else generate()
    fp = fingerprint(public_key) if key_type == "ssh" else x509_fingerprint(public_key)
    keypair = KeyPair(name=name, user_id=user_id, type=key_type, public_key=public_key,
                      fingerprint=fp)
    try:
        with db.begin_nested():
            db.add(keypair)
    except IntegrityError:
        raise KeyPairExists(key_name=name) from None
    return keypair, private


def get_keypair(db: Session, user_id: str, name: str) -> KeyPair:
    keypair = db.scalars(select(KeyPair).where(KeyPair.user_id == user_id,
                                               KeyPair.name == name)).first()
    if keypair is None:
        raise KeypairNotFound(name=name, user_id=user_id)
    return keypair


def list_keypairs(db: Session, user_id: str, params: ListParams) -> Page:
    stmt = select(KeyPair).where(KeyPair.user_id == user_id)
    if params.marker:
        marker = db.scalars(select(KeyPair.id).where(KeyPair.user_id == user_id,
                                                     KeyPair.name == params.marker)).first()
        if marker is None:
            raise KeypairNotFound(name=params.marker, user_id=user_id)
        params.marker = marker  # type: ignore[assignment]
    return paginate(db, stmt, columns={"name": KeyPair.name}, id_column=KeyPair.id,
                    params=ListParams(sorts=[("name", True)], limit=params.limit,
                                      marker=params.marker))


def delete_keypair(db: Session, user_id: str, name: str) -> None:
    db.delete(get_keypair(db, user_id, name))
    db.flush()

