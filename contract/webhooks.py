"""What a webhook receiver can count on: the headers of a request, the test event, the retry
schedule and the limits of a delivery. The delivery worker (the `webhooks` package), the
OpenAPI document's `webhooks` and docs/api.md all read them here."""

from __future__ import annotations

# The Standard Webhooks headers (https://www.standardwebhooks.com/), each with what it holds.
HEADERS: tuple[tuple[str, str, str], ...] = (
    (
        "webhook-id",
        "The event's id (`evt_...`): the same on every attempt of one event, so a receiver "
        "de-duplicates by it.",
        r"^(evt_[0-9a-f]{16}|test_[0-9a-f]{16})$",  # an event's, or a test event's
    ),
    (
        "webhook-timestamp",
        "When this attempt was signed, in whole seconds since 1970-01-01T00:00:00Z; refuse "
        "one more than five minutes away from your clock.",
        r"^[0-9]{1,12}$",
    ),
    (
        "webhook-signature",
        "`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` under "
        "the endpoint's secret; during a secret rotation's overlap two of them, space-"
        "separated, the new secret's first.",
        r"^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)?$",
    ),
)
# Sent only by `affdir-admin webhook test`, never from the feed; its data names the endpoint.
TEST_EVENT = "webhook.test"
TEST_ID_PATTERN = r"^test_[0-9a-f]{16}$"
ENDPOINT_ID_PATTERN = r"^whk_[0-9a-z]{16}$"

# The worker's waits after the 1st, 2nd, ... failed attempt (seconds; the last repeats),
# each drawn uniformly between one second and it (full jitter), and how long after the
# first attempt a delivery is given up and its endpoint disabled.
RETRY_DELAYS: tuple[float, ...] = (5.0, 300.0, 1800.0, 7200.0, 18000.0, 36000.0)
GIVE_UP_HOURS = 72
REQUEST_TIMEOUT = 10.0  # seconds for a request, answer included (the worker's default)
MAX_RESPONSE_BYTES = 64 * 1024  # of an answer read, then ignored
