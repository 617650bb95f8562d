"""Fixtures of the deployment files' tests."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest
from opskit import run_help


@pytest.fixture(scope="session")
def command_help() -> Callable[[str], subprocess.CompletedProcess[str]]:
    """`command_help(name)`: what `name --help` printed, asked once per session however many
    deployment files run the command."""
    asked: dict[str, subprocess.CompletedProcess[str]] = {}

    def get(name: str) -> subprocess.CompletedProcess[str]:
        if name not in asked:
            asked[name] = run_help(name)
        return asked[name]

    return get
