"""The connectors, by network id: one module per network (its spec, requests, parsing).

Registering a network is one line of MODULES: the module's name, which is its network id.
The module defines one Connector subclass (with its `spec`); it is instantiated here."""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from sync.connectors.base import Connector

# One line per network, in name order.
MODULES: tuple[str, ...] = (
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


def load(name: str) -> Connector:
    """The connector of module sync.connectors.<name>: its one Connector subclass."""
    module = importlib.import_module(f"{__name__}.{name}")
    (cls,) = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Connector)
        and value.__module__ == module.__name__
    ]
    connector = cls()
    if connector.spec.network != name:
        raise ValueError(f"sync/connectors/{name}.py declares network {connector.spec.network!r}")
    return connector


CONNECTORS: Mapping[str, Connector] = {name: load(name) for name in MODULES}
