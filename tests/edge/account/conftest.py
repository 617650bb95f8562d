"""Fixtures of the edge's account endpoints: `edge_client` starts from `account_config`
(tests/support/accountfixtures.py), so each test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest

from edge.config import Config


@pytest.fixture
def client_config(account_config: Config) -> Config:
    return account_config
