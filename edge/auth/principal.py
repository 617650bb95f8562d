"""Who is calling (`Principal`) and what turns an API key into one (`Authenticator`).

A leaf module: `edge.appkeys` types its keys with these, and everything else imports
`edge.appkeys`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from contract.vocabulary import ANONYMOUS_PLAN


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the key that authenticated the request and its account."""

    key_id: str
    account_uid: str
    plan: str
    prefix: str
    label: str
    scopes: tuple[str, ...]
    suspended: bool = False
    # The account as read together with the key (store.AccountView), as fresh as the
    # key's cache entry; /v1/me reads the account from the store instead.
    account: Any = field(default=None, compare=False, repr=False)

    @property
    def anonymous(self) -> bool:
        """A request without a key (`anonymous`): the public, counted by its address."""
        return self.plan == ANONYMOUS_PLAN


def anonymous(address_key: str) -> Principal:
    """The caller of a request without an Authorization header, where an endpoint allows it:
    no key and no account, rate-limited per client address under the anonymous plan."""
    return Principal(
        key_id=f"address:{address_key}",
        account_uid="",
        plan=ANONYMOUS_PLAN,
        prefix="",
        label="",
        scopes=(),
    )


class NotCached:
    """What `Authenticator.cached` answers when the key's answer is not at hand."""


NOT_CACHED = NotCached()


class Authenticator(Protocol):
    async def authenticate(self, key: str) -> Principal | None:
        """The principal of a key, or None when unknown or revoked.

        Raises StoreUnavailable when the key cannot be verified right now (a key not seen
        since start while the account store is down).
        """
        ...

    def cached(self, key: str) -> Principal | NotCached | None:
        """What `authenticate` would answer, when it can without waiting (a fresh cache
        entry), else NOT_CACHED. The auth step calls it first: almost every request is
        a cache hit, and a plain call costs less than a coroutine."""
        ...
