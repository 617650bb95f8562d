"""`python -m webhooks`: the delivery worker (webhooks.cli)."""

from __future__ import annotations

import sys

from webhooks.cli import main

sys.exit(main())
