"""The records that flow between the build's stages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contract.resources import PROGRAM


@dataclass(frozen=True, slots=True)
class Program:
    """A validated, published, scored programme, ready to render.

    Attributes use the API's field names so that rendering is a plain copy in the spec's
    order (`contract.resources.PROGRAM`).
    """

    slug: str
    name: str
    host: str
    site: str
    pitch: str
    vertical: str
    model: str
    commission: str
    recurring: bool
    cookieDays: int  # noqa: N815 - the API's own field name
    payout: str
    minPayout: int | float  # noqa: N815
    markets: tuple[str, ...]
    platform: str
    signupUrl: str  # noqa: N815
    score: int
    image: str
    createdAt: str  # noqa: N815

    def to_api(self) -> dict[str, Any]:
        """The Programme resource, members in the spec's order."""
        return {name: _plain(getattr(self, name)) for name in PROGRAM.names}

    @property
    def sort_key(self) -> tuple[int, str]:
        """Directory order: score descending, then slug ascending (slugs are unique)."""
        return (-self.score, self.slug)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
