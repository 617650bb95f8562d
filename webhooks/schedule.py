"""When a failed delivery is tried again, and when it is given up.

Exponential backoff with full jitter: after the n-th failed attempt the next one comes a
uniformly random time up to the n-th delay of the schedule (its last delay repeated; at
least a second, the store's resolution), so receivers coming back from an outage are not
hit by every delivery at once. The schedule is contract.webhooks.RETRY_DELAYS.
A delivery still failing `give_up_after` after its first attempt is given up, and its
endpoint disabled with the reason: the defaults cover about three days.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence
from dataclasses import dataclass

from contract.webhooks import GIVE_UP_HOURS, RETRY_DELAYS

# Seconds: 5 s, 5 min, 30 min, 2 h, 5 h, then every 10 h.
DELAYS: tuple[float, ...] = RETRY_DELAYS
GIVE_UP_AFTER = dt.timedelta(hours=GIVE_UP_HOURS)
MIN_WAIT = 1.0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    delays: Sequence[float] = DELAYS
    give_up_after: dt.timedelta = GIVE_UP_AFTER

    def __post_init__(self) -> None:
        if not self.delays or any(not d > 0 for d in self.delays):
            raise ValueError("retry delays are positive numbers of seconds, one at least")
        if self.give_up_after <= dt.timedelta(0):
            raise ValueError("the retry period must be positive")

    def ceiling(self, failures: int) -> float:
        """The largest wait after the `failures`-th failed attempt (1 for the first)."""
        return float(self.delays[min(max(failures, 1), len(self.delays)) - 1])


def next_attempt(
    policy: RetryPolicy,
    failures: int,
    first_attempt: dt.datetime,
    now: dt.datetime,
    rng: random.Random,
) -> dt.datetime | None:
    """When to try again after `failures` failed attempts, the first at `first_attempt`
    and the last just now; None: give up."""
    if now - first_attempt >= policy.give_up_after:
        return None
    # At least a second, rounded up to the whole second the store keeps: never due again
    # at the moment it failed.
    wait = max(MIN_WAIT, rng.uniform(0.0, policy.ceiling(failures)))
    later = now + dt.timedelta(seconds=wait)
    whole = later.replace(microsecond=0)
    return whole if whole == later else whole + dt.timedelta(seconds=1)
