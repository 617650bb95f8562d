"""The connectors, by network id: one module per network (its spec, requests, parsing)."""

from __future__ import annotations

from collections.abc import Mapping

from sync.connectors.admitad import Admitad
from sync.connectors.affilae import Affilae
from sync.connectors.awin import Awin
from sync.connectors.base import Connector
from sync.connectors.cj import CJ
from sync.connectors.clickbank import ClickBank
from sync.connectors.commissionfactory import CommissionFactory
from sync.connectors.digistore24 import Digistore24
from sync.connectors.effiliation import Effiliation
from sync.connectors.impact import Impact
from sync.connectors.kwanko import Kwanko
from sync.connectors.partnerize import Partnerize
from sync.connectors.sovrn import Sovrn
from sync.connectors.tradedoubler import Tradedoubler

CONNECTORS: Mapping[str, Connector] = {
    c.spec.network: c
    for c in (
        Awin(),
        CJ(),
        Impact(),
        Tradedoubler(),
        Effiliation(),
        Kwanko(),
        Partnerize(),
        Affilae(),
        Admitad(),
        CommissionFactory(),
        Sovrn(),
        Digistore24(),
        ClickBank(),
    )
}
