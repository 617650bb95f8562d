"""The account store's schema: its history of steps and the version a database is at."""
