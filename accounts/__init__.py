"""The accounts: publishers' accounts, API keys, connected networks and their commissions.

Owns the account store (SQLite or PostgreSQL behind one interface), API key generation and
hashing, credential encryption, the networks' status vocabularies, the commission file
importer and the demo seeder. It knows nothing of HTTP: the edge reads it, the sync worker
and the operator's CLI write it.
"""
