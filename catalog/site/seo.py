"""Structured data (schema.org JSON-LD) for the HTML directory's pages, as plain dicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from catalog.model import Program
from contract.labels import LABELS

CONTEXT = "https://schema.org"


def item_list(name: str, urls_and_names: Sequence[tuple[str, str]], first: int = 1) -> dict:
    """An ItemList of pages, positions counted from `first` (page 2 starts at 25)."""
    return {
        "@type": "ItemList",
        "name": name,
        "itemListOrder": "https://schema.org/ItemListOrderDescending",
        "itemListElement": [
            {"@type": "ListItem", "position": first + i, "url": url, "name": title}
            for i, (url, title) in enumerate(urls_and_names)
        ],
    }


def breadcrumb_list(crumbs: Sequence[tuple[str, str]]) -> dict:
    """A BreadcrumbList from (name, absolute URL) pairs."""
    return {
        "@type": "BreadcrumbList",
        "itemListElement": [
            {"@type": "ListItem", "position": i, "name": name, "item": url}
            for i, (name, url) in enumerate(crumbs, start=1)
        ],
    }


def program_offer(
    program: Program, canonical: str, *, signup: str | None, website: str | None
) -> dict:
    """The programme as an Offer (to affiliates) made by the advertiser's Organization.

    `signup` and `website` are the programme's URLs once checked by `safe_url` (None when
    unsafe): the caller has them already, and only safe URLs belong in the data."""
    organization: dict[str, Any] = {"@type": "Organization", "name": program.name}
    if website:
        organization["url"] = website
    offer: dict[str, Any] = {
        "@type": "Offer",
        "@id": canonical + "#offer",
        "name": f"{program.name} affiliate programme",
        "description": program.pitch,
        "category": LABELS["vertical"][program.vertical].en,
        "areaServed": [{"@type": "Country", "identifier": code} for code in program.markets],
        "offeredBy": organization,
        "mainEntityOfPage": canonical,
    }
    if signup:
        offer["url"] = signup
    return offer


def graph(*nodes: dict) -> dict:
    """One JSON-LD document holding several nodes."""
    return {"@context": CONTEXT, "@graph": list(nodes)}
