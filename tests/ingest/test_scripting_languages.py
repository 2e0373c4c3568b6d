"""Extraction and resolution for Ruby, Lua, Bash, Elixir, Haskell and Zig.

Each fixture repository under ``tests/fixtures/repos/<lang>_basic`` is indexed
through the real pipeline and compared with golden sets of objects, CONTAINS
(below the repository node), IMPORTS and CALLS edges and unresolved references.
Ids are written without the ``fx:`` repository prefix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vitalrag.kernel.text import code_tokens
from language_golden import (  # noqa: F401 - pytest runs the imported tests here
    by_qualname as _by_qualname,
    facts as _facts,
    indexed_fixture,
    test_broken_file_is_partly_indexed_and_reported,
    test_edges_match_golden,
    test_every_definition_has_lines_hash_and_language,
    test_objects_match_golden,
    test_repository_contains_every_top_file_or_folder,
    test_tests_edges_follow_calls_from_tests,
    test_unresolved_match_golden,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"

GOLDEN: dict[str, dict] = {
    "ruby_basic": {
        "broken": 'lib/broken.rb',
        "objects": {
            ('class', 'lib/broken.rb:Fine'),
            ('class', 'lib/shop.rb:Shop'),
            ('class', 'lib/shop/cart.rb:Shop'),
            ('class', 'lib/shop/cart.rb:Shop.Cart'),
            ('class', 'lib/shop/cart_discount.rb:Shop'),
            ('class', 'lib/shop/cart_discount.rb:Shop.Cart'),
            ('class', 'lib/shop/pricing.rb:Shop'),
            ('class', 'lib/shop/pricing.rb:Shop.Pricing'),
            ('class', 'test/pricing_test.rb:PricingTest'),
            ('file', 'lib/broken.rb'),
            ('file', 'lib/helpers.rb'),
            ('file', 'lib/shop.rb'),
            ('file', 'lib/shop/cart.rb'),
            ('file', 'lib/shop/cart_discount.rb'),
            ('file', 'lib/shop/pricing.rb'),
            ('file', 'spec/cart_spec.rb'),
            ('file', 'test/pricing_test.rb'),
            ('function', 'lib/helpers.rb:format_money'),
            ('method', 'lib/broken.rb:Fine.ok'),
            ('method', 'lib/shop.rb:Shop.build_cart'),
            ('method', 'lib/shop.rb:Shop.dump'),
            ('method', 'lib/shop/cart.rb:Shop.Cart.empty'),
            ('method', 'lib/shop/cart.rb:Shop.Cart.initialize'),
            ('method', 'lib/shop/cart.rb:Shop.Cart.of'),
            ('method', 'lib/shop/cart.rb:Shop.Cart.size'),
            ('method', 'lib/shop/cart.rb:Shop.Cart.total'),
            ('method', 'lib/shop/cart.rb:Shop.Cart.validate!'),
            ('method', 'lib/shop/cart_discount.rb:Shop.Cart.discounted'),
            ('method', 'lib/shop/pricing.rb:Shop.Pricing.apply'),
            ('method', 'lib/shop/pricing.rb:Shop.Pricing.rate'),
            ('method', 'test/pricing_test.rb:PricingTest.helper_rate'),
            ('test', 'spec/cart_spec.rb:Shop::Cart.builds from items'),
            ('test', 'spec/cart_spec.rb:Shop::Cart.when empty.totals zero'),
            ('test', 'test/pricing_test.rb:PricingTest.test_apply'),
        },
        "CONTAINS": {
            ('lib/broken.rb', 'lib/broken.rb:Fine'),
            ('lib/broken.rb:Fine', 'lib/broken.rb:Fine.ok'),
            ('lib/helpers.rb', 'lib/helpers.rb:format_money'),
            ('lib/shop.rb', 'lib/shop.rb:Shop'),
            ('lib/shop.rb:Shop', 'lib/shop.rb:Shop.build_cart'),
            ('lib/shop.rb:Shop', 'lib/shop.rb:Shop.dump'),
            ('lib/shop/cart.rb', 'lib/shop/cart.rb:Shop'),
            ('lib/shop/cart.rb:Shop', 'lib/shop/cart.rb:Shop.Cart'),
            ('lib/shop/cart.rb:Shop.Cart', 'lib/shop/cart.rb:Shop.Cart.empty'),
            ('lib/shop/cart.rb:Shop.Cart', 'lib/shop/cart.rb:Shop.Cart.initialize'),
            ('lib/shop/cart.rb:Shop.Cart', 'lib/shop/cart.rb:Shop.Cart.of'),
            ('lib/shop/cart.rb:Shop.Cart', 'lib/shop/cart.rb:Shop.Cart.size'),
            ('lib/shop/cart.rb:Shop.Cart', 'lib/shop/cart.rb:Shop.Cart.total'),
            ('lib/shop/cart.rb:Shop.Cart', 'lib/shop/cart.rb:Shop.Cart.validate!'),
            ('lib/shop/cart_discount.rb', 'lib/shop/cart_discount.rb:Shop'),
            ('lib/shop/cart_discount.rb:Shop', 'lib/shop/cart_discount.rb:Shop.Cart'),
            ('lib/shop/cart_discount.rb:Shop.Cart', 'lib/shop/cart_discount.rb:Shop.Cart.discounted'),
            ('lib/shop/pricing.rb', 'lib/shop/pricing.rb:Shop'),
            ('lib/shop/pricing.rb:Shop', 'lib/shop/pricing.rb:Shop.Pricing'),
            ('lib/shop/pricing.rb:Shop.Pricing', 'lib/shop/pricing.rb:Shop.Pricing.apply'),
            ('lib/shop/pricing.rb:Shop.Pricing', 'lib/shop/pricing.rb:Shop.Pricing.rate'),
            ('spec/cart_spec.rb', 'spec/cart_spec.rb:Shop::Cart.builds from items'),
            ('spec/cart_spec.rb', 'spec/cart_spec.rb:Shop::Cart.when empty.totals zero'),
            ('test/pricing_test.rb', 'test/pricing_test.rb:PricingTest'),
            ('test/pricing_test.rb:PricingTest', 'test/pricing_test.rb:PricingTest.helper_rate'),
            ('test/pricing_test.rb:PricingTest', 'test/pricing_test.rb:PricingTest.test_apply'),
        },
        "IMPORTS": {
            ('lib/shop.rb', 'lib/shop/cart.rb'),
            ('lib/shop.rb', 'lib/shop/pricing.rb'),
            ('lib/shop/cart.rb', 'lib/helpers.rb'),
            ('lib/shop/cart.rb', 'lib/shop/pricing.rb'),
            ('spec/cart_spec.rb', 'lib/shop.rb'),
            ('test/pricing_test.rb', 'lib/shop/pricing.rb'),
        },
        "CALLS": {
            ('lib/shop.rb:Shop.build_cart', 'lib/shop/cart.rb:Shop.Cart'),
            ('lib/shop.rb:Shop.build_cart', 'lib/shop/pricing.rb:Shop.Pricing.apply'),
            ('lib/shop/cart.rb:Shop.Cart.empty', 'lib/shop/cart.rb:Shop.Cart'),
            ('lib/shop/cart.rb:Shop.Cart.initialize', 'lib/shop/cart.rb:Shop.Cart.validate!'),
            ('lib/shop/cart.rb:Shop.Cart.total', 'lib/helpers.rb:format_money'),
            ('lib/shop/cart_discount.rb:Shop.Cart.discounted', 'lib/shop/cart.rb:Shop.Cart.total'),
            ('lib/shop/cart_discount.rb:Shop.Cart.discounted', 'lib/shop/pricing.rb:Shop.Pricing.apply'),
            ('lib/shop/pricing.rb:Shop.Pricing.apply', 'lib/shop/pricing.rb:Shop.Pricing.rate'),
            ('spec/cart_spec.rb:Shop::Cart.builds from items', 'lib/shop.rb:Shop.build_cart'),
            ('spec/cart_spec.rb:Shop::Cart.when empty.totals zero', 'lib/shop/cart.rb:Shop.Cart.empty'),
            ('test/pricing_test.rb:PricingTest.helper_rate', 'lib/shop/pricing.rb:Shop.Pricing.rate'),
            ('test/pricing_test.rb:PricingTest.test_apply', 'lib/shop/pricing.rb:Shop.Pricing.apply'),
        },
        "unresolved": {
            ('lib/shop.rb', 'IMPORTS', 'nowhere', 'missing-module'),
            ('lib/shop.rb:Shop.build_cart', 'CALLS', 'items.map', 'dynamic-receiver'),
            ('lib/shop.rb:Shop.dump', 'CALLS', 'cart.total', 'dynamic-receiver'),
            ('lib/shop/cart.rb:Shop.Cart.of', 'CALLS', 'empty.merge', 'dynamic-receiver'),
            ('lib/shop/cart.rb:Shop.Cart.size', 'CALLS', 'self.total_count', 'unknown-attribute'),
            ('lib/shop/cart.rb:Shop.Cart.total', 'CALLS', '@items.sum', 'dynamic-receiver'),
            ('lib/shop/cart.rb:Shop.Cart.validate!', 'CALLS', 'items.nil?', 'dynamic-receiver'),
            ('lib/shop/cart.rb:Shop.Cart.validate!', 'CALLS', 'log', 'unknown-name'),
            ('spec/cart_spec.rb:Shop::Cart.builds from items', 'CALLS', 'cart.size', 'dynamic-receiver'),
            ('spec/cart_spec.rb:Shop::Cart.builds from items', 'CALLS', 'expect(cart.size).to', 'dynamic-receiver'),
            ('spec/cart_spec.rb:Shop::Cart.when empty.totals zero', 'CALLS', 'Shop::Cart.empty.total', 'dynamic-receiver'),
            ('spec/cart_spec.rb:Shop::Cart.when empty.totals zero', 'CALLS', 'expect(Shop::Cart.empty.total).to', 'dynamic-receiver'),
        },
    },
    "lua_basic": {
        "broken": 'lua/broken.lua',
        "objects": {
            ('file', 'lua/broken.lua'),
            ('file', 'lua/shop/cart.lua'),
            ('file', 'lua/shop/init.lua'),
            ('file', 'lua/shop/util.lua'),
            ('file', 'spec/cart_spec.lua'),
            ('function', 'lua/broken.lua:fine'),
            ('function', 'lua/shop/cart.lua:Cart.new'),
            ('function', 'lua/shop/cart.lua:validate'),
            ('function', 'lua/shop/init.lua:M.new_cart'),
            ('function', 'lua/shop/init.lua:M.version'),
            ('function', 'lua/shop/util.lua:M.add'),
            ('function', 'lua/shop/util.lua:M.clamp'),
            ('function', 'lua/shop/util.lua:early'),
            ('function', 'lua/shop/util.lua:legacy_total'),
            ('method', 'lua/shop/cart.lua:Cart.describe'),
            ('method', 'lua/shop/cart.lua:Cart.format'),
            ('method', 'lua/shop/cart.lua:Cart.total'),
            ('test', 'spec/cart_spec.lua:Cart.is built by the shop'),
            ('test', 'spec/cart_spec.lua:Cart.total.sums the prices'),
        },
        "CONTAINS": {
            ('lua/broken.lua', 'lua/broken.lua:fine'),
            ('lua/shop/cart.lua', 'lua/shop/cart.lua:Cart.describe'),
            ('lua/shop/cart.lua', 'lua/shop/cart.lua:Cart.format'),
            ('lua/shop/cart.lua', 'lua/shop/cart.lua:Cart.new'),
            ('lua/shop/cart.lua', 'lua/shop/cart.lua:Cart.total'),
            ('lua/shop/cart.lua', 'lua/shop/cart.lua:validate'),
            ('lua/shop/init.lua', 'lua/shop/init.lua:M.new_cart'),
            ('lua/shop/init.lua', 'lua/shop/init.lua:M.version'),
            ('lua/shop/util.lua', 'lua/shop/util.lua:M.add'),
            ('lua/shop/util.lua', 'lua/shop/util.lua:M.clamp'),
            ('lua/shop/util.lua', 'lua/shop/util.lua:early'),
            ('lua/shop/util.lua', 'lua/shop/util.lua:legacy_total'),
            ('spec/cart_spec.lua', 'spec/cart_spec.lua:Cart.is built by the shop'),
            ('spec/cart_spec.lua', 'spec/cart_spec.lua:Cart.total.sums the prices'),
        },
        "IMPORTS": {
            ('lua/shop/cart.lua', 'lua/shop/util.lua'),
            ('lua/shop/init.lua', 'lua/shop/cart.lua'),
            ('spec/cart_spec.lua', 'lua/shop/cart.lua'),
            ('spec/cart_spec.lua', 'lua/shop/init.lua'),
        },
        "CALLS": {
            ('lua/shop/cart.lua:Cart.new', 'lua/shop/cart.lua:validate'),
            ('lua/shop/cart.lua:Cart.new', 'lua/shop/util.lua:legacy_total'),
            ('lua/shop/cart.lua:Cart.total', 'lua/shop/cart.lua:Cart.format'),
            ('lua/shop/cart.lua:Cart.total', 'lua/shop/util.lua:M.add'),
            ('lua/shop/init.lua:M.new_cart', 'lua/shop/cart.lua:Cart.new'),
            ('spec/cart_spec.lua:Cart.is built by the shop', 'lua/shop/init.lua:M.new_cart'),
            ('spec/cart_spec.lua:Cart.total.sums the prices', 'lua/shop/cart.lua:Cart.new'),
        },
        "unresolved": {
            ('lua/shop/cart.lua:Cart.describe', 'CALLS', 'self:missing', 'unknown-attribute'),
            ('lua/shop/cart.lua:Cart.describe', 'CALLS', 'util.nothing', 'unknown-attribute'),
            ('lua/shop/util.lua:legacy_total', 'CALLS', 'early', 'unknown-name'),
            ('spec/cart_spec.lua:Cart.total.sums the prices', 'CALLS', 'c:total', 'dynamic-receiver'),
        },
    },
    "bash_basic": {
        "broken": 'lib/broken.sh',
        "objects": {
            ('file', 'bin/deploy.sh'),
            ('file', 'lib/broken.sh'),
            ('file', 'lib/cleanup.sh'),
            ('file', 'lib/log.sh'),
            ('file', 'test/log.bats'),
            ('file', 'test/test_helper.bash'),
            ('file', 'test/test_stamp.sh'),
            ('function', 'bin/deploy.sh:build'),
            ('function', 'bin/deploy.sh:main'),
            ('function', 'lib/broken.sh:fine'),
            ('function', 'lib/cleanup.sh:cleanup_elsewhere'),
            ('function', 'lib/log.sh:_stamp'),
            ('function', 'lib/log.sh:log_info'),
            ('function', 'lib/log.sh:log_warn'),
            ('function', 'test/test_helper.bash:setup'),
            ('test', 'test/log.bats:info lines carry INFO'),
            ('test', 'test/log.bats:warnings go to stderr'),
            ('test', 'test/test_stamp.sh:testStampHasColons'),
        },
        "CONTAINS": {
            ('bin/deploy.sh', 'bin/deploy.sh:build'),
            ('bin/deploy.sh', 'bin/deploy.sh:main'),
            ('lib/broken.sh', 'lib/broken.sh:fine'),
            ('lib/cleanup.sh', 'lib/cleanup.sh:cleanup_elsewhere'),
            ('lib/log.sh', 'lib/log.sh:_stamp'),
            ('lib/log.sh', 'lib/log.sh:log_info'),
            ('lib/log.sh', 'lib/log.sh:log_warn'),
            ('test/log.bats', 'test/log.bats:info lines carry INFO'),
            ('test/log.bats', 'test/log.bats:warnings go to stderr'),
            ('test/test_helper.bash', 'test/test_helper.bash:setup'),
            ('test/test_stamp.sh', 'test/test_stamp.sh:testStampHasColons'),
        },
        "IMPORTS": {
            ('bin/deploy.sh', 'lib/log.sh'),
            ('test/log.bats', 'test/test_helper.bash'),
            ('test/test_helper.bash', 'lib/log.sh'),
            ('test/test_stamp.sh', 'lib/log.sh'),
        },
        "CALLS": {
            ('bin/deploy.sh', 'bin/deploy.sh:main'),
            ('bin/deploy.sh:build', 'lib/log.sh:log_warn'),
            ('bin/deploy.sh:main', 'bin/deploy.sh:build'),
            ('bin/deploy.sh:main', 'lib/log.sh:log_info'),
            ('lib/log.sh:log_info', 'lib/log.sh:_stamp'),
            ('lib/log.sh:log_warn', 'lib/log.sh:log_info'),
            ('test/log.bats:info lines carry INFO', 'lib/log.sh:log_info'),
            ('test/log.bats:warnings go to stderr', 'lib/log.sh:log_warn'),
            ('test/test_stamp.sh:testStampHasColons', 'lib/log.sh:_stamp'),
        },
        "unresolved": {
            ('bin/deploy.sh', 'IMPORTS', 'lib/missing.sh', 'missing-module'),
            ('bin/deploy.sh:build', 'CALLS', 'cleanup_elsewhere', 'unknown-name'),
            ('bin/deploy.sh:main', 'CALLS', '$POST_HOOK', 'dynamic-name'),
        },
    },
    "elixir_basic": {
        "broken": 'lib/shop/broken.ex',
        "objects": {
            ('class', 'lib/shop/broken.ex:Shop.Broken'),
            ('class', 'lib/shop/broken.ex:Shop.Fine'),
            ('class', 'lib/shop/cart.ex:Shop.Cart'),
            ('class', 'lib/shop/money.ex:Shop.Format'),
            ('class', 'lib/shop/money.ex:Shop.Money'),
            ('class', 'lib/shop/money.ex:Shop.Priced.Shop.Cart'),
            ('class', 'lib/shop/pricing.ex:Shop.Pricing'),
            ('class', 'test/cart_test.exs:Shop.CartTest'),
            ('file', 'lib/shop/broken.ex'),
            ('file', 'lib/shop/cart.ex'),
            ('file', 'lib/shop/money.ex'),
            ('file', 'lib/shop/pricing.ex'),
            ('file', 'test/cart_test.exs'),
            ('interface', 'lib/shop/money.ex:Shop.Priced'),
            ('method', 'lib/shop/broken.ex:Shop.Fine.ok'),
            ('method', 'lib/shop/cart.ex:Shop.Cart.check'),
            ('method', 'lib/shop/cart.ex:Shop.Cart.describe'),
            ('method', 'lib/shop/cart.ex:Shop.Cart.size'),
            ('method', 'lib/shop/cart.ex:Shop.Cart.sum'),
            ('method', 'lib/shop/cart.ex:Shop.Cart.total'),
            ('method', 'lib/shop/money.ex:Shop.Format.label'),
            ('method', 'lib/shop/money.ex:Shop.Money.format'),
            ('method', 'lib/shop/money.ex:Shop.Priced.Shop.Cart.price'),
            ('method', 'lib/shop/money.ex:Shop.Priced.price'),
            ('method', 'lib/shop/pricing.ex:Shop.Pricing.apply'),
            ('method', 'lib/shop/pricing.ex:Shop.Pricing.rate'),
            ('test', 'test/cart_test.exs:Shop.CartTest.size counts items'),
            ('test', 'test/cart_test.exs:Shop.CartTest.total.sums the prices'),
        },
        "CONTAINS": {
            ('lib/shop/broken.ex', 'lib/shop/broken.ex:Shop.Broken'),
            ('lib/shop/broken.ex', 'lib/shop/broken.ex:Shop.Fine'),
            ('lib/shop/broken.ex:Shop.Fine', 'lib/shop/broken.ex:Shop.Fine.ok'),
            ('lib/shop/cart.ex', 'lib/shop/cart.ex:Shop.Cart'),
            ('lib/shop/cart.ex:Shop.Cart', 'lib/shop/cart.ex:Shop.Cart.check'),
            ('lib/shop/cart.ex:Shop.Cart', 'lib/shop/cart.ex:Shop.Cart.describe'),
            ('lib/shop/cart.ex:Shop.Cart', 'lib/shop/cart.ex:Shop.Cart.size'),
            ('lib/shop/cart.ex:Shop.Cart', 'lib/shop/cart.ex:Shop.Cart.sum'),
            ('lib/shop/cart.ex:Shop.Cart', 'lib/shop/cart.ex:Shop.Cart.total'),
            ('lib/shop/money.ex', 'lib/shop/money.ex:Shop.Format'),
            ('lib/shop/money.ex', 'lib/shop/money.ex:Shop.Money'),
            ('lib/shop/money.ex', 'lib/shop/money.ex:Shop.Priced'),
            ('lib/shop/money.ex', 'lib/shop/money.ex:Shop.Priced.Shop.Cart'),
            ('lib/shop/money.ex:Shop.Format', 'lib/shop/money.ex:Shop.Format.label'),
            ('lib/shop/money.ex:Shop.Money', 'lib/shop/money.ex:Shop.Money.format'),
            ('lib/shop/money.ex:Shop.Priced', 'lib/shop/money.ex:Shop.Priced.price'),
            ('lib/shop/money.ex:Shop.Priced.Shop.Cart', 'lib/shop/money.ex:Shop.Priced.Shop.Cart.price'),
            ('lib/shop/pricing.ex', 'lib/shop/pricing.ex:Shop.Pricing'),
            ('lib/shop/pricing.ex:Shop.Pricing', 'lib/shop/pricing.ex:Shop.Pricing.apply'),
            ('lib/shop/pricing.ex:Shop.Pricing', 'lib/shop/pricing.ex:Shop.Pricing.rate'),
            ('test/cart_test.exs', 'test/cart_test.exs:Shop.CartTest'),
            ('test/cart_test.exs:Shop.CartTest', 'test/cart_test.exs:Shop.CartTest.size counts items'),
            ('test/cart_test.exs:Shop.CartTest', 'test/cart_test.exs:Shop.CartTest.total.sums the prices'),
        },
        "IMPORTS": {
            ('lib/shop/cart.ex', 'lib/shop/money.ex:Shop.Format'),
            ('lib/shop/cart.ex', 'lib/shop/money.ex:Shop.Money'),
            ('lib/shop/cart.ex', 'lib/shop/pricing.ex:Shop.Pricing'),
            ('test/cart_test.exs', 'lib/shop/cart.ex:Shop.Cart'),
        },
        "CALLS": {
            ('lib/shop/cart.ex:Shop.Cart.describe', 'lib/shop/cart.ex:Shop.Cart.size'),
            ('lib/shop/cart.ex:Shop.Cart.total', 'lib/shop/cart.ex:Shop.Cart.sum'),
            ('lib/shop/cart.ex:Shop.Cart.total', 'lib/shop/money.ex:Shop.Format.label'),
            ('lib/shop/cart.ex:Shop.Cart.total', 'lib/shop/money.ex:Shop.Money.format'),
            ('lib/shop/cart.ex:Shop.Cart.total', 'lib/shop/pricing.ex:Shop.Pricing.apply'),
            ('lib/shop/money.ex:Shop.Priced.Shop.Cart.price', 'lib/shop/cart.ex:Shop.Cart.total'),
            ('lib/shop/pricing.ex:Shop.Pricing.apply', 'lib/shop/pricing.ex:Shop.Pricing.rate'),
            ('test/cart_test.exs:Shop.CartTest.size counts items', 'lib/shop/cart.ex:Shop.Cart.size'),
            ('test/cart_test.exs:Shop.CartTest.total.sums the prices', 'lib/shop/cart.ex:Shop.Cart.total'),
        },
        "unresolved": {
            ('lib/shop/broken.ex', 'CALLS', 'x', 'unknown-name'),
            ('lib/shop/cart.ex:Shop.Cart.check', 'CALLS', 'Pricing.nothing', 'unknown-attribute'),
            ('lib/shop/cart.ex:Shop.Cart.check', 'CALLS', 'mod.validate', 'dynamic-receiver'),
            ('lib/shop/cart.ex:Shop.Cart.check', 'CALLS', 'untracked', 'unknown-name'),
            ('lib/shop/cart.ex:Shop.Cart.describe', 'CALLS', 'cart.hook.', 'dynamic-receiver'),
        },
    },
    "zig_basic": {
        "broken": 'src/broken.zig',
        "objects": {
            ('class', 'src/cart.zig:Cart'),
            ('class', 'src/util.zig:Range'),
            ('enum', 'src/cart.zig:Kind'),
            ('enum', 'src/util.zig:Failure'),
            ('file', 'src/broken.zig'),
            ('file', 'src/cart.zig'),
            ('file', 'src/main.zig'),
            ('file', 'src/util.zig'),
            ('function', 'src/broken.zig:fine'),
            ('function', 'src/main.zig:main'),
            ('function', 'src/main.zig:report'),
            ('function', 'src/util.zig:clamp'),
            ('method', 'src/cart.zig:Cart.init'),
            ('method', 'src/cart.zig:Cart.sum'),
            ('method', 'src/cart.zig:Cart.total'),
            ('method', 'src/cart.zig:Cart.zero'),
            ('method', 'src/util.zig:Range.width'),
            ('test', 'src/cart.zig:total sums the items'),
            ('test', 'src/util.zig:test clamp'),
        },
        "CONTAINS": {
            ('src/broken.zig', 'src/broken.zig:fine'),
            ('src/cart.zig', 'src/cart.zig:Cart'),
            ('src/cart.zig', 'src/cart.zig:Kind'),
            ('src/cart.zig', 'src/cart.zig:total sums the items'),
            ('src/cart.zig:Cart', 'src/cart.zig:Cart.init'),
            ('src/cart.zig:Cart', 'src/cart.zig:Cart.sum'),
            ('src/cart.zig:Cart', 'src/cart.zig:Cart.total'),
            ('src/cart.zig:Cart', 'src/cart.zig:Cart.zero'),
            ('src/main.zig', 'src/main.zig:main'),
            ('src/main.zig', 'src/main.zig:report'),
            ('src/util.zig', 'src/util.zig:Failure'),
            ('src/util.zig', 'src/util.zig:Range'),
            ('src/util.zig', 'src/util.zig:clamp'),
            ('src/util.zig', 'src/util.zig:test clamp'),
            ('src/util.zig:Range', 'src/util.zig:Range.width'),
        },
        "IMPORTS": {
            ('src/cart.zig', 'src/util.zig'),
            ('src/main.zig', 'src/cart.zig'),
            ('src/main.zig', 'src/util.zig'),
        },
        "CALLS": {
            ('src/cart.zig:Cart.total', 'src/cart.zig:Cart.sum'),
            ('src/cart.zig:Cart.total', 'src/cart.zig:Cart.zero'),
            ('src/cart.zig:Cart.total', 'src/util.zig:clamp'),
            ('src/cart.zig:total sums the items', 'src/cart.zig:Cart.init'),
            ('src/main.zig:main', 'src/cart.zig:Cart.init'),
            ('src/main.zig:main', 'src/main.zig:report'),
            ('src/main.zig:main', 'src/util.zig:Range.width'),
            ('src/main.zig:main', 'src/util.zig:clamp'),
            ('src/util.zig:test clamp', 'src/util.zig:clamp'),
        },
        "unresolved": {
            ('src/cart.zig:Cart.sum', 'CALLS', 'self.discount', 'unknown-attribute'),
            ('src/cart.zig:total sums the items', 'CALLS', 'c.total', 'dynamic-receiver'),
            ('src/main.zig', 'IMPORTS', 'gone.zig', 'missing-module'),
            ('src/main.zig:main', 'CALLS', 'cart.total', 'dynamic-receiver'),
            ('src/main.zig:report', 'CALLS', 'undefinedHelper', 'unknown-name'),
        },
    },
    "haskell_basic": {
        "broken": 'src/Shop/Broken.hs',
        "objects": {
            ('class', 'src/Shop/Cart.hs:Cart'),
            ('class', 'src/Shop/Cart.hs:Cents'),
            ('class', 'src/Shop/Cart.hs:Items'),
            ('file', 'src/Shop/Broken.hs'),
            ('file', 'src/Shop/Cart.hs'),
            ('file', 'src/Shop/Pricing.hs'),
            ('file', 'src/Shop/Util.hs'),
            ('file', 'test/CartSpec.hs'),
            ('function', 'src/Shop/Broken.hs:fine'),
            ('function', 'src/Shop/Cart.hs:helper'),
            ('function', 'src/Shop/Cart.hs:helper.go'),
            ('function', 'src/Shop/Cart.hs:instance Priced Cart.price'),
            ('function', 'src/Shop/Cart.hs:total'),
            ('function', 'src/Shop/Pricing.hs:apply'),
            ('function', 'src/Shop/Pricing.hs:rate'),
            ('function', 'src/Shop/Pricing.hs:unused'),
            ('function', 'src/Shop/Util.hs:clamp'),
            ('function', 'src/Shop/Util.hs:within'),
            ('function', 'test/CartSpec.hs:spec'),
            ('interface', 'src/Shop/Cart.hs:Priced'),
            ('method', 'src/Shop/Cart.hs:Priced.discount'),
            ('method', 'src/Shop/Cart.hs:Priced.price'),
            ('test', 'test/CartSpec.hs:spec.Cart.prices through the rate'),
            ('test', 'test/CartSpec.hs:spec.Cart.totals the items'),
        },
        "CONTAINS": {
            ('src/Shop/Broken.hs', 'src/Shop/Broken.hs:fine'),
            ('src/Shop/Cart.hs', 'src/Shop/Cart.hs:Cart'),
            ('src/Shop/Cart.hs', 'src/Shop/Cart.hs:Cents'),
            ('src/Shop/Cart.hs', 'src/Shop/Cart.hs:Items'),
            ('src/Shop/Cart.hs', 'src/Shop/Cart.hs:Priced'),
            ('src/Shop/Cart.hs', 'src/Shop/Cart.hs:helper'),
            ('src/Shop/Cart.hs', 'src/Shop/Cart.hs:instance Priced Cart.price'),
            ('src/Shop/Cart.hs', 'src/Shop/Cart.hs:total'),
            ('src/Shop/Cart.hs:Priced', 'src/Shop/Cart.hs:Priced.discount'),
            ('src/Shop/Cart.hs:Priced', 'src/Shop/Cart.hs:Priced.price'),
            ('src/Shop/Cart.hs:helper', 'src/Shop/Cart.hs:helper.go'),
            ('src/Shop/Pricing.hs', 'src/Shop/Pricing.hs:apply'),
            ('src/Shop/Pricing.hs', 'src/Shop/Pricing.hs:rate'),
            ('src/Shop/Pricing.hs', 'src/Shop/Pricing.hs:unused'),
            ('src/Shop/Util.hs', 'src/Shop/Util.hs:clamp'),
            ('src/Shop/Util.hs', 'src/Shop/Util.hs:within'),
            ('test/CartSpec.hs', 'test/CartSpec.hs:spec'),
            ('test/CartSpec.hs:spec', 'test/CartSpec.hs:spec.Cart.prices through the rate'),
            ('test/CartSpec.hs:spec', 'test/CartSpec.hs:spec.Cart.totals the items'),
        },
        "IMPORTS": {
            ('src/Shop/Cart.hs', 'src/Shop/Pricing.hs'),
            ('src/Shop/Cart.hs', 'src/Shop/Util.hs'),
            ('test/CartSpec.hs', 'src/Shop/Cart.hs'),
            ('test/CartSpec.hs', 'src/Shop/Pricing.hs'),
        },
        "CALLS": {
            ('src/Shop/Cart.hs:instance Priced Cart.price', 'src/Shop/Cart.hs:total'),
            ('src/Shop/Cart.hs:total', 'src/Shop/Cart.hs:helper'),
            ('src/Shop/Cart.hs:total', 'src/Shop/Util.hs:clamp'),
            ('src/Shop/Util.hs:within', 'src/Shop/Util.hs:clamp'),
            ('test/CartSpec.hs:spec.Cart.prices through the rate', 'src/Shop/Pricing.hs:apply'),
            ('test/CartSpec.hs:spec.Cart.totals the items', 'src/Shop/Cart.hs:total'),
        },
        "unresolved": {
            ('src/Shop/Broken.hs', 'CALLS', 'broken', 'unknown-name'),
            ('src/Shop/Cart.hs:total', 'CALLS', 'items', 'unknown-name'),
            ('src/Shop/Util.hs:within', 'CALLS', 'check', 'unknown-name'),
            ('test/CartSpec.hs:spec.Cart.prices through the rate', 'CALLS', 'P.missing', 'unknown-attribute'),
        },
    },
}


indexed = indexed_fixture(GOLDEN)


# --- details of single objects ---------------------------------------------------------------

def test_ruby_signatures_docstrings_and_singletons():
    facts = _facts("lib/shop/cart.rb", (FIXTURES / "ruby_basic/lib/shop/cart.rb").read_text())
    objs = _by_qualname(facts)
    assert objs["Shop"].signature == "module Shop"  # the comment after it is not part of it
    assert objs["Shop.Cart"].name == "Cart" and objs["Shop.Cart"].docstring == "Items and their total."
    assert objs["Shop.Cart.total"].docstring == "The sum of the items, formatted."
    assert set(facts.data.singletons) == {objs["Shop.Cart.empty"].id, objs["Shop.Cart.of"].id}
    one_line = _facts("lib/x.rb", "class A::B\n  def x; end\n  def y(a) = a\nend\n")
    assert [(o.qualname, o.name, o.signature) for o in one_line.objects] == [
        ("A.B", "B", "class A::B"), ("A.B.x", "x", "def x"), ("A.B.y", "y", "def y(a)")]


def test_ruby_examples_are_tests_only_in_test_files():
    source = 'describe "x" do\n  it "works" do\n    run\n  end\nend\n'
    assert [(o.kind, o.qualname, o.signature) for o in _facts("spec/x_spec.rb", source).objects] == [
        ("test", "x.works", 'it "works" do')]
    assert _facts("lib/x.rb", source).objects == []
    plain = _facts("test/x_test.rb", "class XTest\n  def test_a; end\nend\n")  # no test base class
    assert [o.kind for o in plain.objects] == ["class", "method"]


def test_ruby_keywords_are_not_search_tokens():
    assert code_tokens("def total elsif nil unless end rescue ensure") == ["total"]


def test_lua_owners_signatures_and_local_visibility():
    facts = _facts("lua/shop/cart.lua", (FIXTURES / "lua_basic/lua/shop/cart.lua").read_text())
    objs = _by_qualname(facts)
    assert (objs["Cart.total"].kind, objs["Cart.total"].name) == ("method", "total")
    assert objs["Cart.total"].docstring == "The sum of the items, formatted."
    assert facts.data.returns == "Cart" and facts.data.locals == [objs["validate"].id]
    util = _facts("lua/shop/util.lua", (FIXTURES / "lua_basic/lua/shop/util.lua").read_text())
    assert _by_qualname(util)["M.clamp"].signature == "M.clamp = function(x)"


def test_lua_busted_blocks_are_tests_only_in_test_files():
    source = 'describe("a", function()\n  it("b", function() run() end)\nend)\n'
    assert [(o.kind, o.qualname) for o in _facts("spec/a_spec.lua", source).objects] == [("test", "a.b")]
    assert _facts("lua/a.lua", source).objects == []


def test_lua_keywords_are_not_search_tokens():
    assert code_tokens("local function total() elseif nil then end") == ["total"]


def test_bash_bats_blocks_are_tests_and_hold_their_calls():
    facts = _facts("test/log.bats", (FIXTURES / "bash_basic/test/log.bats").read_text())
    tests = [o for o in facts.objects if o.kind == "test"]
    assert [(o.name, o.start_line, o.end_line, o.signature) for o in tests] == [
        ("info lines carry INFO", 4, 7, '@test "info lines carry INFO" {'),
        ("warnings go to stderr", 9, 11, '@test "warnings go to stderr" {')]
    assert {(r.name, r.source) for r in facts.refs if r.kind == "call" and r.name.startswith("log_")} == {
        ("log_info", tests[0].id), ("log_warn", tests[1].id)}
    twice = _facts("t/x.bats", '@test "a" {\n  true\n}\n@test "a" {\n  true\n}\n')
    assert [o.qualname for o in twice.objects] == ["a", "a#2"]


def test_bash_source_paths_from_the_script_folder():
    facts = _facts("bin/deploy.sh", (FIXTURES / "bash_basic/bin/deploy.sh").read_text())
    assert [(r.name, r.data.script_dir) for r in facts.refs if r.kind == "import"] == [
        ("../lib/log.sh", True), ("lib/missing.sh", False)]
    assert _by_qualname(facts)["main"].docstring == "Deploys the current branch."


def test_bash_keywords_are_not_search_tokens():
    assert code_tokens("if deploy then fi; case word in esac; elif") == ["deploy", "word"]


def test_elixir_clauses_docs_and_signatures():
    facts = _facts("lib/shop/cart.ex", (FIXTURES / "elixir_basic/lib/shop/cart.ex").read_text())
    objs = _by_qualname(facts)
    assert (objs["Shop.Cart.sum"].start_line, objs["Shop.Cart.sum"].end_line) == (22, 23)  # two clauses, one object
    assert "Shop.Cart.sum#2" not in objs
    assert objs["Shop.Cart"].docstring == "A cart of priced items." and objs["Shop.Cart"].signature == "defmodule Shop.Cart"
    assert objs["Shop.Cart.total"].docstring == "Sums the prices, formatted."
    assert objs["Shop.Cart.size"].signature == "def size(cart)"
    calls = {r.name for r in facts.refs if r.kind == "call"}
    assert not calls & {"def", "defp", "defmodule", "moduledoc", "doc", "total", "cart.items"}
    imports = {(r.name, r.data.verb, r.data.alias) for r in facts.refs if r.kind == "import"}
    assert ("Shop.Pricing", "alias", "Pricing") in imports and ("Shop.Money", "alias", "M") in imports


def test_elixir_test_blocks_are_tests_only_in_test_files():
    source = 'defmodule T do\n  test "a" do\n    run()\n  end\nend\n'
    assert [o.kind for o in _facts("test/t_test.exs", source).objects] == ["class", "test"]
    assert [o.kind for o in _facts("lib/t.ex", source).objects] == ["class"]


def test_elixir_keywords_are_not_search_tokens():
    assert code_tokens("defmodule Cart do defp total fn end") == ["cart", "total"]


def test_zig_containers_docs_and_this():
    facts = _facts("src/cart.zig", (FIXTURES / "zig_basic/src/cart.zig").read_text())
    objs = _by_qualname(facts)
    assert objs["Cart"].docstring == "A cart of prices in cents." and objs["Cart"].signature == "pub const Cart = struct"
    assert objs["Cart.total"].kind == "method" and objs["Cart.total"].docstring == "The sum of the items, clamped."
    assert objs["Kind"].signature == "pub const Kind = enum"
    assert facts.data.this == {"Self": "Cart"}
    imports = [(r.name, r.data.alias, r.data.member) for r in facts.refs if r.kind == "import"]
    assert imports == [("util.zig", "util", None), ("std", "std", None)]


def test_zig_keywords_are_not_search_tokens():
    assert code_tokens("pub fn total() comptime errdefer orelse") == ["total"]


def test_haskell_equations_signatures_and_docs():
    facts = _facts("src/Shop/Pricing.hs", (FIXTURES / "haskell_basic/src/Shop/Pricing.hs").read_text())
    objs = _by_qualname(facts)
    assert "apply#2" not in objs  # two equations, one object, from its type signature on
    assert (objs["apply"].start_line, objs["apply"].end_line) == (8, 10)
    assert objs["apply"].signature == "apply :: Int -> Int" and objs["apply"].docstring == "The price of an amount."
    assert facts.namespace == "Shop.Pricing"
    cart = _by_qualname(_facts("src/Shop/Cart.hs", (FIXTURES / "haskell_basic/src/Shop/Cart.hs").read_text()))
    assert cart["Priced"].kind == "interface" and cart["Priced.discount"].kind == "method"
    assert (cart["Priced.discount"].start_line, cart["Priced.discount"].end_line) == (22, 23)
    assert cart["instance Priced Cart.price"].kind == "function" and cart["helper.go"].kind == "function"


def test_haskell_deeply_nested_lambdas_stay_bounded():
    """The grammar's layout scanner gives up past some hundreds of nested
    lambdas: the file is then indexed as recovered, quickly, never stalled."""
    import time

    def nested(n: int) -> str:
        return "outer =\n" + "".join(f"  g{i} (\\x ->\n" for i in range(n)) + "  0" + ")" * n + "\n"

    facts = _facts("app.hs", nested(100))
    assert sorted(r.name for r in facts.refs if r.kind == "call") == sorted(f"g{i}" for i in range(100))
    started = time.perf_counter()
    deep = _facts("app.hs", nested(1000))
    assert time.perf_counter() - started < 8 and deep.problems


def test_haskell_keywords_are_not_search_tokens():
    assert code_tokens("newtype Cents deriving qualified") == ["cents"]
