"""The rate limit response header fields: their names and values, defined once.

Two sets say the same decision:
- `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`: integers, the form the
  early drafts of draft-ietf-httpapi-ratelimit-headers used, kept for existing clients;
- `RateLimit-Policy` and `RateLimit`: the structured fields of the current draft (-08 and
  later), one policy named `"default"`: `RateLimit-Policy: "default";q=LIMIT;w=WINDOW` and
  `RateLimit: "default";r=REMAINING;t=RESET`.

`q` equals `RateLimit-Limit`, `r` equals `RateLimit-Remaining` and `t` equals
`RateLimit-Reset` on every answer. The edge (edge.http.ratelimit) sends them, CORS exposes
them and the OpenAPI document declares them, all from the names below.
"""

from __future__ import annotations

LIMIT = "RateLimit-Limit"
REMAINING = "RateLimit-Remaining"
RESET = "RateLimit-Reset"
POLICY = "RateLimit-Policy"
RATELIMIT = "RateLimit"
# The one quota policy a key has: its plan's requests per window.
POLICY_NAME = "default"

# Every rate limit field, in the order an answer carries them.
NAMES: tuple[str, ...] = (LIMIT, REMAINING, RESET, POLICY, RATELIMIT)

POLICY_PATTERN = r'^"default";q=[1-9][0-9]*;w=[1-9][0-9]*$'
RATELIMIT_PATTERN = r'^"default";r=[0-9]+;t=[0-9]+$'


def fields(limit: int, window: int, remaining: int, reset: int) -> dict[str, str]:
    """The five header fields of one decision, both forms agreeing."""
    return {
        LIMIT: str(limit),
        REMAINING: str(remaining),
        RESET: str(reset),
        POLICY: f'"{POLICY_NAME}";q={limit};w={window}',
        RATELIMIT: f'"{POLICY_NAME}";r={remaining};t={reset}',
    }
