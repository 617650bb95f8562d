"""The operator's command line (`python -m admin`, `affdir-admin`).

Accounts, plans, capabilities, API keys, network connections, commission imports and the
demo seed: every write to the account store that is not the sync worker's goes through here.
"""
