"""The connectors, by network id: one module per network (its spec, requests, parsing).

Registering a network is one line of contract.networks.NETWORKS (its id) and a module here
of that name.
The module defines one Connector subclass (with its `spec`); it is instantiated here."""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from contract.networks import NETWORKS
from sync.connectors.base import Connector

# The networks of contract.networks, each with its module here.
MODULES: tuple[str, ...] = NETWORKS


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
