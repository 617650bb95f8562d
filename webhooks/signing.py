"""Secrets, payloads and the three Standard Webhooks headers.

A secret is `whsec_` and the base64 of 32 random bytes, made here, shown to the operator
once and stored sealed like network credentials (accounts.crypto), bound to its endpoint.
`webhook-id` is the event's public id: the same on every attempt of one event, so a
receiver de-duplicates by it. During a rotation's overlap each request carries two
signatures, the new secret's first: "v1,<new> v1,<old>".
"""

from __future__ import annotations

import base64
import datetime as dt
import os
from collections.abc import Sequence

import orjson
from standardwebhooks import Webhook

from accounts.crypto import decrypt_credentials, encrypt_credentials
from accounts.keyring import Keyring
from contract.webhooks import TEST_EVENT
from store.base import format_timestamp
from store.webhooks import Job, SealedSecrets

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32


def new_secret() -> str:
    """A new signing secret, `whsec_...`."""
    return SECRET_PREFIX + base64.b64encode(os.urandom(SECRET_BYTES)).decode()


def _bound_to(endpoint_uid: str) -> str:
    # The associated data's second part: no network id has a colon, so a sealed secret
    # never opens as a connection's credentials, nor on another endpoint's row.
    return f"webhook:{endpoint_uid}"


def seal_secret(keyring: Keyring, account_uid: str, endpoint_uid: str, secret: str) -> bytes:
    """The secret sealed under the current service secret, bound to its endpoint."""
    return encrypt_credentials(keyring, account_uid, _bound_to(endpoint_uid), secret.encode())


def open_secret(keyring: Keyring, account_uid: str, endpoint_uid: str, sealed: bytes) -> str:
    """A sealed secret's text (CredentialsError if the keyring cannot open it)."""
    return decrypt_credentials(keyring, account_uid, _bound_to(endpoint_uid), sealed).decode()


def signing_secrets(keyring: Keyring, sealed: SealedSecrets, now: dt.datetime) -> tuple[str, ...]:
    """The secrets that sign a request sent at `now`: the current one, then the previous
    one while its overlap lasts."""
    uid, account = sealed.endpoint_uid, sealed.account_uid
    found = [open_secret(keyring, account, uid, sealed.ciphertext)]
    if (
        sealed.previous_ciphertext is not None
        and sealed.previous_expires_at is not None
        and format_timestamp(now) < sealed.previous_expires_at
    ):
        found.append(open_secret(keyring, account, uid, sealed.previous_ciphertext))
    return tuple(found)


def event_body(event_id: str, event_type: str, occurred_at: str, data: str) -> bytes:
    """The request body: the event as GET /v1/events lists it. `data` is the database's
    JSON text, kept byte for byte (its amounts are exact decimals, never floats)."""
    head = orjson.dumps({"id": event_id, "type": event_type, "occurredAt": occurred_at})
    return head[:-1] + b',"data":' + data.encode() + b"}"


def job_body(job: Job) -> bytes:
    """The body of a claimed delivery."""
    return event_body(job.event_id, job.event_type, job.occurred_at, job.data)


def probe_body(event_id: str, endpoint_uid: str, now: dt.datetime) -> bytes:
    """The body of a test event: `data` names the endpoint."""
    data = orjson.dumps({"endpoint": endpoint_uid}).decode()
    return event_body(event_id, TEST_EVENT, format_timestamp(now), data)


def headers(msg_id: str, body: bytes, secrets: Sequence[str], now: dt.datetime) -> dict[str, str]:
    """The request's headers: webhook-id, webhook-timestamp (whole seconds of `now`),
    webhook-signature (one `v1,` signature per secret) and the content type."""
    if not secrets:
        raise ValueError("a request is signed by one secret at least")
    moment = now.astimezone(dt.UTC)
    text = body.decode()
    signatures = " ".join(Webhook(s).sign(msg_id, moment, text) for s in secrets)
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(moment.timestamp())),
        "webhook-signature": signatures,
        "content-type": "application/json",
    }
