"""The fake networks of the sync tests, one module per network, found by their modules:
a module of this package that declares `FAKE` (a fakes.base.Fake) is a network's fake.
Its recordings live in tests/sync/recordings/<network>/."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping

from fakes.base import Fake


def discover() -> Mapping[str, Fake]:
    """Every fake network of this package, by network id, in name order."""
    found: dict[str, Fake] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        fake = getattr(module, "FAKE", None)
        if not isinstance(fake, Fake):
            raise TypeError(f"tests/sync/fakes/{info.name}.py declares no FAKE")
        if fake.network != info.name:
            raise ValueError(f"fakes/{info.name}.py declares the fake of {fake.network!r}")
        found[fake.network] = fake
    return found


FAKES: Mapping[str, Fake] = discover()
