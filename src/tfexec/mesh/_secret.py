"""The per-run secret that signs every record tfexec writes to an external launcher's store.

torchrun's rendezvous store listens on every interface of the host that serves it, and any
client that reaches it may read and write keys. tfexec cannot change where it listens, so it
refuses what it did not write: each record under its prefix carries an HMAC-SHA256 (stdlib
``hmac``) of the key and the payload under a secret every participant was given, and a
record without one, or with a wrong one, stops the run with an error naming the key and the
rank that record claims to come from.

The secret comes from ``TFEXEC_MESH_SECRET`` (the value itself) or ``TFEXEC_MESH_SECRET_FILE``
(a file only its owner can read, mode 0600 or stricter); at least 16 characters. Use a fresh
one per run: a record signed in one run is valid in another run under the same secret.
tfexec's own launcher needs none: its participants report through files in a private (0700)
directory, and its store on 127.0.0.1 carries only torch's own rendezvous of the gloo group.
"""

import hashlib
import hmac
import os
import stat

from tfexec.errors import EvalError

SECRET_VARIABLE = "TFEXEC_MESH_SECRET"
SECRET_FILE_VARIABLE = "TFEXEC_MESH_SECRET_FILE"
_MIN_LENGTH = 16
_MAGIC = b"tfexec-signed "
_HOW = (
    f"give every participant the same secret of at least {_MIN_LENGTH} characters, fresh for each run: "
    f"{SECRET_VARIABLE}=<secret>, or {SECRET_FILE_VARIABLE}=<a file of mode 0600 holding it> "
    "(for example: python -c 'import secrets; print(secrets.token_hex(32))' > secret; chmod 600 secret)"
)


class UnsignedRecord(EvalError):
    """A record in the store under tfexec's prefix that this run's secret did not sign."""


def run_secret() -> bytes:
    """The secret of this run, from the environment; an ``EvalError`` saying how to give one when there is none."""
    value = os.environ.get(SECRET_VARIABLE)
    path = os.environ.get(SECRET_FILE_VARIABLE)
    if value and path:
        raise EvalError(f"both {SECRET_VARIABLE} and {SECRET_FILE_VARIABLE} are set: give the secret one way")
    if value:
        secret = value.strip()
        where = SECRET_VARIABLE
    elif path:
        secret = _read_secret_file(path)
        where = f"{SECRET_FILE_VARIABLE} ({path})"
    else:
        raise EvalError(
            "a mesh run under an external launcher signs its control records in the launcher's store, which any client "
            f"that reaches it can write, and no secret is set: {_HOW}"
        )
    if len(secret) < _MIN_LENGTH:
        raise EvalError(f"the secret in {where} has {len(secret)} characters, fewer than {_MIN_LENGTH}: {_HOW}")
    return secret.encode()


def _read_secret_file(path: str) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise EvalError(f"{SECRET_FILE_VARIABLE}={path}: cannot open it: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise EvalError(f"{SECRET_FILE_VARIABLE}={path}: not a regular file")
        if info.st_uid != os.getuid():
            raise EvalError(f"{SECRET_FILE_VARIABLE}={path}: owned by another user (uid {info.st_uid}); a secret file must be your own")
        if info.st_mode & 0o077:
            raise EvalError(
                f"{SECRET_FILE_VARIABLE}={path}: other users may read or write it (mode {stat.S_IMODE(info.st_mode):04o}): "
                f"chmod 600 {path}"
            )
        with os.fdopen(fd, "rb", closefd=False) as f:
            raw = f.read(4096)
    finally:
        os.close(fd)
    try:
        return raw.decode().strip()
    except UnicodeDecodeError as exc:
        raise EvalError(f"{SECRET_FILE_VARIABLE}={path}: not text") from exc


class Signer:
    """Signs and checks the records of one run under one store prefix (a ``PrefixStore``'s:
    key ``k`` is stored as ``<prefix>/k``, the name a signature covers and a refusal gives)."""

    def __init__(self, secret: bytes, prefix: str) -> None:
        self._secret, self.prefix = secret, prefix

    def _mac(self, key: str, payload: bytes) -> bytes:
        return hmac.new(self._secret, f"{self.prefix}/{key}".encode() + b"\0" + payload, hashlib.sha256).hexdigest().encode()

    def sign(self, key: str, payload: str) -> str:
        """The record to store under ``key``: the payload with its MAC."""
        return (_MAGIC + self._mac(key, payload.encode()) + b" ").decode() + payload

    def open(self, key: str, record: bytes, claimed: int | None) -> str:
        """The payload of ``record`` read from ``key``, or ``UnsignedRecord`` (naming the key,
        and the rank ``claimed`` to have written it) when this run's secret did not sign it."""
        how = "is not signed"
        if record.startswith(_MAGIC):
            mac, _, data = record[len(_MAGIC):].partition(b" ")
            if hmac.compare_digest(mac, self._mac(key, data)):
                try:
                    return data.decode()
                except UnicodeDecodeError:
                    pass
            how = "carries a signature this run's secret did not make"
        who = f"claimed to be written by rank {claimed}" if claimed is not None else "a record of the whole run"
        raise UnsignedRecord(
            f"the launcher's store holds a record tfexec refuses: key {self.prefix}/{key} ({who}) {how}. Another client "
            f"wrote to the store (torchrun's store listens on every interface), or the participants were given different "
            f"secrets ({SECRET_VARIABLE} / {SECRET_FILE_VARIABLE}); the run was stopped"
        )
