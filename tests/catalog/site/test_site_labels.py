"""contract/labels.py: one table, a French and an English label for every enum value."""

from __future__ import annotations

import pytest

from contract import labels as lb
from contract import vocabulary as v


def test_the_table_covers_exactly_the_vocabulary():
    assert dict(lb.VALUES) == {
        "vertical": v.VERTICALS,
        "model": v.MODELS,
        "payout": v.PAYOUTS,
        "commissionMode": v.COMMISSION_MODES,
    }
    for kind, values in lb.VALUES.items():
        assert tuple(lb.LABELS[kind]) == values, f"{kind}: same values, in the vocabulary's order"


@pytest.mark.parametrize(
    ("kind", "value"), [(kind, value) for kind, values in lb.VALUES.items() for value in values]
)
def test_every_value_has_both_labels(kind, value):
    entry = lb.LABELS[kind][value]
    assert entry.en.strip() and entry.fr.strip()
    assert lb.label(kind, value, "en") == entry.en
    assert lb.label(kind, value, "fr") == entry.fr
    # An explanation, when there is one, exists in both languages.
    assert bool(entry.about_en) == bool(entry.about_fr)


def test_models_are_explained():
    for model in v.MODELS:
        assert lb.LABELS["model"][model].about("en") and lb.LABELS["model"][model].about("fr")


def test_unknown_values_are_errors():
    with pytest.raises(KeyError):
        lb.label("vertical", "casino")
