"""What the sync tells its observers as it works: the `SyncEvents` protocol.

The worker and the network client report here, and never know who listens: the metrics
and the health check (sync.metrics) when the worker serves them, nobody otherwise
(`Unobserved`). Every call is cheap and synchronous, and none may raise.
"""

from __future__ import annotations

from typing import Protocol

from sync.model import SyncReport
from sync.ports import Connection


class SyncEvents(Protocol):
    """The events of one worker process."""

    def polled(self) -> None:
        """The store answered the list of due connections."""
        ...

    def started(self, connection: Connection) -> None:
        """A sync of `connection` started."""
        ...

    def finished(self, connection: Connection, report: SyncReport) -> None:
        """A sync of `connection` ended with its outcome recorded in the store."""
        ...

    def ended(self, connection: Connection) -> None:
        """A sync of `connection` is over, whether or not it recorded an outcome."""
        ...

    def answered(self, network: str, status: str) -> None:
        """One request to `network` ended: its HTTP status, or `timeout` or `unreachable`."""
        ...

    def retrying(self, network: str, cause: str) -> None:
        """A request to `network` is sent again; `cause` is the failure's SyncError code."""
        ...

    def waited(self, network: str, cause: str, seconds: float) -> None:
        """A request to `network` waited `seconds` for its rate limit (`limit`) or because
        the network asked (`retry_after`)."""
        ...


class Unobserved:
    """Events nobody listens to."""

    def polled(self) -> None:
        pass

    def started(self, connection: Connection) -> None:
        pass

    def finished(self, connection: Connection, report: SyncReport) -> None:
        pass

    def ended(self, connection: Connection) -> None:
        pass

    def answered(self, network: str, status: str) -> None:
        pass

    def retrying(self, network: str, cause: str) -> None:
        pass

    def waited(self, network: str, cause: str, seconds: float) -> None:
        pass
