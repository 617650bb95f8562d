"""Human labels, in English and French, for every enum value of the Programme resource.

One table, keyed by the vocabulary's own values (`contract.vocabulary`), so that the HTML
directory, the docs and any future French edition read the same words. A test checks that
every vocabulary value has both labels and that no label names a value that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from contract import vocabulary as v

Lang = Literal["en", "fr"]
Kind = Literal["vertical", "model", "payout", "commissionMode"]


@dataclass(frozen=True, slots=True)
class Label:
    """How one enum value is shown to people; `about_*` is an optional one-line explanation."""

    en: str
    fr: str
    about_en: str = ""
    about_fr: str = ""

    def text(self, lang: Lang = "en") -> str:
        return self.en if lang == "en" else self.fr

    def about(self, lang: Lang = "en") -> str:
        return self.about_en if lang == "en" else self.about_fr


# The enum each kind of label belongs to: the vocabulary stays the one source of values.
VALUES: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {
        "vertical": v.VERTICALS,
        "model": v.MODELS,
        "payout": v.PAYOUTS,
        "commissionMode": v.COMMISSION_MODES,
    }
)

L = Label

LABELS: MappingProxyType[str, MappingProxyType[str, Label]] = MappingProxyType(
    {
        "vertical": MappingProxyType(
            {
                "saas": L("Software & SaaS", "Logiciels SaaS"),
                "ecommerce": L("E-commerce", "E-commerce"),
                "infoproduit": L("Courses & digital products", "Infoproduits"),
                "finance": L("Finance", "Finance"),
                "sante": L("Health", "Santé"),
                "voyage": L("Travel", "Voyage"),
                "mode": L("Fashion", "Mode"),
                "maison": L("Home & garden", "Maison"),
                "jeux": L("Games", "Jeux"),
                "services": L("Services", "Services"),
                "immobilier": L("Real estate", "Immobilier"),
                "autre": L("Other", "Autre"),
            }
        ),
        "model": MappingProxyType(
            {
                "cps": L(
                    "Cost per sale",
                    "Coût par vente",
                    "Paid a share or a fixed amount of each sale you refer.",
                    "Rémunéré sur chaque vente apportée, en pourcentage ou en montant fixe.",
                ),
                "cpa": L(
                    "Cost per action",
                    "Coût par action",
                    "Paid for each defined action: a sign-up, a first deposit, an install.",
                    "Rémunéré pour chaque action définie : inscription, premier dépôt, installation.",
                ),
                "cpl": L(
                    "Cost per lead",
                    "Coût par lead",
                    "Paid for each qualified lead, whether or not it later buys.",
                    "Rémunéré pour chaque contact qualifié, qu'il achète ensuite ou non.",
                ),
                "recurring": L(
                    "Recurring",
                    "Récurrent",
                    "Paid again on every renewal of the subscriptions you refer.",
                    "Rémunéré à chaque renouvellement des abonnements apportés.",
                ),
                "hybrid": L(
                    "Hybrid",
                    "Hybride",
                    "A mix of the above, e.g. a fixed bonus plus a share of sales.",
                    "Une combinaison des modèles ci-dessus, par exemple prime fixe et pourcentage.",
                ),
            }
        ),
        "payout": MappingProxyType(
            {
                "weekly": L("Weekly", "Hebdomadaire"),
                "biweekly": L("Fortnightly", "Tous les 15 jours"),
                "monthly": L("Monthly", "Mensuel"),
                "net30": L(
                    "Net 30",
                    "À 30 jours",
                    "Paid 30 days after the end of the period in which commissions were approved.",
                    "Payé 30 jours après la fin de la période de validation des commissions.",
                ),
                "net60": L(
                    "Net 60",
                    "À 60 jours",
                    "Paid 60 days after the end of the period in which commissions were approved.",
                    "Payé 60 jours après la fin de la période de validation des commissions.",
                ),
            }
        ),
        "commissionMode": MappingProxyType(
            {
                "percentage": L(
                    "Percentage",
                    "Pourcentage",
                    "A share of each sale or subscription.",
                    "Une part de chaque vente ou abonnement.",
                ),
                "flat": L(
                    "Flat amount",
                    "Montant fixe",
                    "A fixed amount per sale, lead or action.",
                    "Un montant fixe par vente, contact ou action.",
                ),
                "tiered": L(
                    "Tiered",
                    "Par paliers",
                    "Rates that rise with the affiliate's volume.",
                    "Des taux qui augmentent avec le volume de l'affilié.",
                ),
                "hybrid": L(
                    "Amount and percentage",
                    "Fixe et pourcentage",
                    "A fixed amount and a share of the sale together.",
                    "Un montant fixe et une part de la vente ensemble.",
                ),
            }
        ),
    }
)


def label(kind: Kind, value: str, lang: Lang = "en") -> str:
    """The label of one enum value; KeyError for a value the vocabulary does not have."""
    return LABELS[kind][value].text(lang)
