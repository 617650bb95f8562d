"""What the session collected, kept by tests/conftest.py for the tests that check it."""

from __future__ import annotations

import pytest

# The folders of the test modules the session collected, before -m or -k deselect any
# (tests/test_collection.py).
COLLECTED_FOLDERS = pytest.StashKey[frozenset[str]]()
