"""The `serve` command: help, defaults and clean errors."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from vitalrag.cli import main
from vitalrag.cli.serve_commands import register


@pytest.fixture
def cli():
    if "serve" not in main.commands:
        register(main)
    return main


def test_serve_help_names_the_tools_and_the_token(cli):
    result = CliRunner().invoke(cli, ["serve", "--help"])
    assert result.exit_code == 0
    for word in ("get_context", "index_status", "VITALRAG_TOKEN", "--transport", "127.0.0.1"):
        assert word in result.output


def test_serve_binds_loopback_by_default(cli):
    host = next(p for p in cli.commands["serve"].params if p.name == "host")
    assert host.default == "127.0.0.1"


def test_serve_without_an_index_is_one_clear_line(cli, tmp_path):
    result = CliRunner().invoke(cli, ["serve", "--store", str(tmp_path / "none")])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"Error: no index at {tmp_path / 'none'} (run `vitalrag index PATH --store {tmp_path / 'none'}` first)"]
