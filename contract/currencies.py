"""ISO 4217 currency codes an imported commission may be in.

Current codes, and codes withdrawn since affiliate networks began reporting (the late
1990s): a commission of 2001 in French francs or of 2022 in Croatian kuna was paid in that
currency, and amounts are never converted. Anything else with three letters is a typo
(`EUT`, `GPB`) that would otherwise become a currency of its own in every report.

To accept a code added to ISO 4217 after this list, add it to CURRENT.
"""

from __future__ import annotations

# ISO 4217 list one (current), including funds codes and the X codes (gold, SDR...).
CURRENT: frozenset[str] = frozenset(
    """
    AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BHD BIF BMD BND BOB BOV BRL BSD
    BTN BWP BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUP CVE CZK DJF DKK DOP
    DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS
    INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL
    LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR
    NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP
    SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN
    UYI UYU UYW UZS VED VES VND VUV WST XAF XAG XAU XBA XBB XBC XBD XCD XCG XDR XOF XPD
    XPF XPT XSU XTS XUA XXX YER ZAR ZMW ZWG
    """.split()  # noqa: SIM905 - a table of codes reads better as text
)

# ISO 4217 list three (historic), the codes withdrawn since 1995.
WITHDRAWN: frozenset[str] = frozenset(
    """
    ADP AFA ANG AOR ATS AZM BEF BGL BGN BYB BYR CSD CUC CYP DEM ECS ECV EEK ESP FIM FRF GHC
    GRD GWP HRK IEP ITL LTL LUF LVL MGF MRO MTL MXP MZM NLG PTE ROL RUR SDD SIT SKK SLL
    SRG STD TMM TPE TRL USS VEB VEF XEU XFO XFU XRE YUM ZMK ZWD ZWL ZWN ZWR
    """.split()  # noqa: SIM905 - a table of codes reads better as text
)

CODES: frozenset[str] = CURRENT | WITHDRAWN
