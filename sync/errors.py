"""The failures a sync tells apart. Messages are built from fixed text, the network's id and
HTTP statuses only: never from URLs, bodies or credentials."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import quote, quote_plus


class SyncError(Exception):
    """A failure with a stable code; `str()` is the human message."""

    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class AuthRejected(SyncError):  # noqa: N818 - named for the outcome it reports
    """The network refused the credentials (401/403, or its own bad-credential answer)."""

    code = "auth_rejected"


class CredentialsIncomplete(SyncError):  # noqa: N818 - named for the outcome it reports
    """The stored credentials lack a field the connector needs (named, never valued)."""

    code = "credentials_incomplete"


class CredentialsUnreadable(SyncError):  # noqa: N818 - named for the outcome it reports
    """The stored credentials could not be decrypted or decoded."""

    code = "credentials_unreadable"


class CredentialsChanged(SyncError):  # noqa: N818 - named for the outcome it reports
    """The stored credentials were replaced (reconnected) while this run refreshed them:
    the run stops, and the next one starts from the stored ones."""

    code = "credentials_changed"


class CredentialsUnstorable(SyncError):  # noqa: N818 - named for the outcome it reports
    """The network rotated the credentials but this run has no way to store them: the new
    ones are never used, so nothing depends on credentials the store does not hold."""

    code = "credentials_unstorable"


class CurrencyMissing(SyncError):  # noqa: N818 - named for the outcome it reports
    """The network's records carry no currency and the connection declares none."""

    code = "currency_missing"


class WindowTooLarge(SyncError):  # noqa: N818 - named for the outcome it reports
    """The network refused or capped the window: it must be split."""

    code = "window_capped"


class MalformedResponse(SyncError):  # noqa: N818 - named for the outcome it reports
    """The answer could not be read (truncated, not the documented shape)."""

    code = "malformed_response"


class RateLimited(SyncError):  # noqa: N818 - named for the outcome it reports
    """The network kept answering 429, or asked to wait longer than we may."""

    code = "rate_limited"


class RateLimitReached(SyncError):  # noqa: N818 - named for the outcome it reports
    """A documented limit (or the network's 429) leaves no request before the run may
    wait: the run stops where it is and resumes `resume_in` seconds from now."""

    code = "rate_limited"

    def __init__(self, message: str, resume_in: float) -> None:
        super().__init__(message)
        self.resume_in = resume_in


class NetworkUnavailable(SyncError):  # noqa: N818 - named for the outcome it reports
    """5xx or connection failures outlasted the retries."""

    code = "network_unavailable"


class NetworkTimeout(SyncError):  # noqa: N818 - named for the outcome it reports
    """Requests kept taking longer than the connector's timeout."""

    code = "timeout"


class UnexpectedStatus(SyncError):  # noqa: N818 - named for the outcome it reports
    """An HTTP status the connector does not expect (a 4xx other than auth)."""

    code = "unexpected_status"


class NetworkRefused(SyncError):  # noqa: N818 - named for the outcome it reports
    """The network answered with a well-formed error of its own (not about credentials)."""

    code = "network_error"


class ResponseTooLarge(SyncError):  # noqa: N818 - named for the outcome it reports
    """The answer was larger than the network's cap (announced or found while reading):
    refused without reading the rest."""

    code = "response_too_large"


class PageLimit(SyncError):  # noqa: N818 - named for the outcome it reports
    """A window needed more pages than the cap: its records are not committed."""

    code = "page_limit"


class RunDeadline(SyncError):  # noqa: N818 - named for the outcome it reports
    """The run reached its time limit (inside its lease) between two pages or while
    waiting: the window under way is not committed, the next run resumes."""

    code = "deadline"


class InternalFault(SyncError):  # noqa: N818 - named for the outcome it reports
    """A connector could not handle an answer (a fault on our side, reported as such)."""

    code = "internal_error"


class UnsupportedNetwork(SyncError):  # noqa: N818 - named for the outcome it reports
    """No connector for the connection's network."""

    code = "unsupported_network"


class PaymentsForbidden(SyncError):  # noqa: N818 - named for the outcome it reports
    """The network refused the payments to credentials it takes for transactions (Awin's
    payments need the Full Access role): the commissions are synced, the payments not."""

    code = "payments_forbidden"


# Every reason code an outcome may carry: the failures above, and the run's own verdicts
# (`records_refused`: records were refused; `deadline`: the run stopped at its time limit).
# docs/sync.md lists them (tests/sync/test_hostile_network.py checks both ways).
REASON_CODES: frozenset[str] = frozenset(
    {
        *(
            cls.code
            for cls in (
                AuthRejected,
                CredentialsIncomplete,
                CredentialsUnreadable,
                CredentialsChanged,
                CredentialsUnstorable,
                CurrencyMissing,
                WindowTooLarge,
                MalformedResponse,
                RateLimited,
                NetworkUnavailable,
                NetworkTimeout,
                UnexpectedStatus,
                NetworkRefused,
                ResponseTooLarge,
                PageLimit,
                RunDeadline,
                InternalFault,
                UnsupportedNetwork,
                PaymentsForbidden,
            )
        ),
        "records_refused",
    }
)
# Why a single record is refused (the run is then `partial`, `records_refused`).
REFUSAL_CODES: frozenset[str] = frozenset(
    {"record_invalid", "record_malformed", "record_ambiguous", "currency_missing"}
)


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret value replaced, as written and as a URL carries it (a key
    in a query string or a path is percent-encoded there): the one redaction of log
    lines (sync.logs), errors and reports."""
    forms = {
        form
        for secret in secrets
        if len(secret) >= 4
        for form in (secret, quote(secret, safe=""), quote_plus(secret, safe=""))
    }
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, "[redacted]")
    return text
