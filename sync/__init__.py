"""Collection of commissions from the affiliate networks.

This package owns the network side of commission reporting: one connector per network
(its declaration, request building and pure response parsing), the HTTP discipline towards
the networks (rate limits, retries, timeouts), the planning of date windows for a correct
incremental sync, the run of one connection's sync with its honest outcome, and the
long-lived worker that syncs every connection on a schedule.

It owns no storage: everything it reads or writes goes through the `SyncStore` protocol
(`sync.ports`), which the account store implements. Credentials arrive encrypted and are
decrypted by a function the caller injects, in memory, for the one sync that needs them.
"""

from __future__ import annotations
