"""The account store's engines: SQLite (embedded) and PostgreSQL. Only store/ imports them."""
