"""``vitalrag transfer`` through click's runner (registered on a throwaway group)."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from vitalrag.cli import VitalGroup
from vitalrag.cli.transfer_commands import register


@pytest.fixture(scope="module")
def cli():
    group = VitalGroup("vitalrag")
    register(group)
    return group


@pytest.fixture
def programs(tmp_path):
    good = tmp_path / "good.py"
    good.write_text("def total(self, rate=TAX_RATE):\n    return with_tax(self.subtotal(), rate)\n")
    bad = tmp_path / "bad.py"
    bad.write_text("def total(self, rate=TAX_RATE):\n    return with_tax(self.subtotal(), rate, 3)\n")
    return str(bad), str(good)


def test_transfer_json(cli, shop, programs):
    bad, good = programs
    result = CliRunner().invoke(cli, ["transfer", "--default", bad, "--alt", good, "--store", shop.location,
                                      "--target", "shop:shop/pricing.py:Cart.total", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["chosen"] == "alternative"
    interface = next(w for w in data["witnesses"] if w["family"] == "interface")
    assert interface["direction"] == 1 and interface["evidence"]["default"]["unfit"] == 1


def test_transfer_text(cli, shop, programs):
    bad, good = programs
    result = CliRunner().invoke(cli, ["transfer", "--default", good, "--alt", bad, "--store", shop.location,
                                      "--target", "shop:shop/pricing.py:Cart.total"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("chosen: default")
    assert "interface" in result.output and "alternative:2" in result.output


@pytest.mark.parametrize("args, message", [
    (["--target", "shop:shop/nowhere.py:f"], "no object"),
    (["--target", "shop:shop/pricing.py:Cart.total", "--alt", "/no/such/file.py"], "cannot read"),
])
def test_errors_are_one_line(cli, shop, programs, args, message):
    bad, good = programs
    base = ["transfer", "--default", bad, "--alt", good, "--store", shop.location]
    result = CliRunner().invoke(cli, base + args)
    assert result.exit_code == 1
    assert message in result.output and "Traceback" not in result.output


def test_help(cli):
    result = CliRunner().invoke(cli, ["transfer", "--help"])
    assert result.exit_code == 0 and "--target" in result.output
    assert isinstance(cli.get_command(click.Context(cli), "transfer"), click.Command)
