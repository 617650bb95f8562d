"""The affiliate networks the service knows, by id: defined once.

The sync registers one connector module per id (`sync.connectors.MODULES` is this tuple),
the build refuses a programme's `networks` entry naming any other (catalog.validation), and
the docs list them (docs/networks.md). A network imported from files only (`network connect
--import-only`, e.g. Amazon Associates) has no connector, and a programme cannot be linked
to it: its programme ids are the publisher's own tracking ids, not the advertiser's.
"""

from __future__ import annotations

from contract.commission import TEXT_LIMITS

# One line per network, in name order.
NETWORKS: tuple[str, ...] = (
    "admitad",
    "adtraction",
    "affilae",
    "avantlink",
    "awin",
    "belboon",
    "cj",
    "clickbank",
    "commissionfactory",
    "daisycon",
    "digistore24",
    "ebay",
    "effiliation",
    "flexoffers",
    "impact",
    "kwanko",
    "partnerize",
    "partnerstack",
    "rakuten",
    "skimlinks",
    "sovrn",
    "timeone",
    "tradedoubler",
    "tradetracker",
    "webgains",
)
# The longest programme id at a network: what a commission's programExternalId may hold.
PROGRAM_ID_MAX_LENGTH = TEXT_LIMITS["program_external_id"]
# The most networks one programme lists (a programme runs on a handful at most; the bound
# keeps a programSlug filter a short condition).
PROGRAM_NETWORKS_MAX = 20
