"""How a sync process sets Python's garbage collector.

A sync makes and drops some ten objects per record it reads (the decoded record, its
fields, the Transaction), and holds a whole window's rows (tens of thousands) until they
are committed. With the default thresholds the collector then runs every few hundred
records, and every so often walks every object of the process; `bench_sync --gc default`
measures the difference (a few percent of a sync on the development machine). Records
hold no reference cycles (they are freed as their last reference goes, whatever the
collector does), so collecting less often costs no memory that lasts.
"""

from __future__ import annotations

import gc

# Allocations between two young collections (default 700), young collections between two
# middle ones (10), middle ones between two full ones (10).
THRESHOLDS = (10_000, 50, 100)


def tune_for_sync() -> None:
    """Collect less often, and never walk what the process holds for its whole life (the
    modules, the store, the connectors): call once set up, before syncing."""
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
