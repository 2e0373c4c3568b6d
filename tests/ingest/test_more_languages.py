"""Extraction and resolution for C, C++, Kotlin, Scala, Swift and PHP.

Each fixture repository under ``tests/fixtures/repos/<lang>_basic`` is indexed
through the real pipeline and compared with golden sets of objects, CONTAINS,
IMPORTS and CALLS edges and unresolved references (ids without the ``fx:``
repository prefix; the repository node itself is ``fx``). Then the details a
golden set does not show: docs, signatures, test detection, header routing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vitalrag.ingest.lang import REGISTRY
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
    "c_basic": {
        "broken": 'src/other.c',
    "objects": {
        ('class', 'include/types.h:number'),
        ('class', 'include/types.h:point_t'),
        ('class', 'include/types.h:size_type'),
        ('enum', 'include/types.h:color'),
        ('file', 'include/calc.h'),
        ('file', 'include/types.h'),
        ('file', 'src/calc.c'),
        ('file', 'src/other.c'),
        ('file', 'tests/test_calc.c'),
        ('function', 'include/calc.h:CLAMP'),
        ('function', 'include/calc.h:twice'),
        ('function', 'src/calc.c:add_numbers'),
        ('function', 'src/calc.c:apply'),
        ('function', 'src/calc.c:helper'),
        ('function', 'src/calc.c:scale'),
        ('function', 'src/other.c:after_error'),
        ('function', 'src/other.c:broken'),
        ('function', 'src/other.c:helper'),
        ('function', 'src/other.c:report'),
        ('function', 'tests/test_calc.c:fixture'),
        ('function', 'tests/test_calc.c:main'),
        ('test', 'tests/test_calc.c:scales_points'),
        ('test', 'tests/test_calc.c:test_add_numbers'),
    },
    "CONTAINS": {
        ('include/calc.h', 'include/calc.h:CLAMP'),
        ('include/calc.h', 'include/calc.h:twice'),
        ('include/types.h', 'include/types.h:color'),
        ('include/types.h', 'include/types.h:number'),
        ('include/types.h', 'include/types.h:point_t'),
        ('include/types.h', 'include/types.h:size_type'),
        ('src/calc.c', 'src/calc.c:add_numbers'),
        ('src/calc.c', 'src/calc.c:apply'),
        ('src/calc.c', 'src/calc.c:helper'),
        ('src/calc.c', 'src/calc.c:scale'),
        ('src/other.c', 'src/other.c:after_error'),
        ('src/other.c', 'src/other.c:broken'),
        ('src/other.c', 'src/other.c:helper'),
        ('src/other.c', 'src/other.c:report'),
        ('tests/test_calc.c', 'tests/test_calc.c:fixture'),
        ('tests/test_calc.c', 'tests/test_calc.c:main'),
        ('tests/test_calc.c', 'tests/test_calc.c:scales_points'),
        ('tests/test_calc.c', 'tests/test_calc.c:test_add_numbers'),
    },
    "IMPORTS": {
        ('include/calc.h', 'include/types.h'),
        ('src/calc.c', 'include/calc.h'),
        ('tests/test_calc.c', 'include/calc.h'),
    },
    "CALLS": {
        ('include/calc.h:twice', 'src/calc.c:add_numbers'),
        ('src/calc.c:add_numbers', 'src/calc.c:helper'),
        ('src/calc.c:helper', 'include/calc.h:CLAMP'),
        ('src/other.c:report', 'src/other.c:helper'),
        ('tests/test_calc.c:fixture', 'include/calc.h:twice'),
        ('tests/test_calc.c:scales_points', 'src/calc.c:scale'),
        ('tests/test_calc.c:test_add_numbers', 'src/calc.c:add_numbers'),
    },
    "unresolved": {
        ('src/calc.c', 'IMPORTS', 'missing.h', 'missing-module'),
        ('src/calc.c:apply', 'CALLS', 'fn', 'dynamic-receiver'),
        ('src/other.c:report', 'CALLS', 'add_numbers', 'unknown-name'),
        ('src/other.c:report', 'CALLS', 'o->run', 'dynamic-receiver'),
        ('tests/test_calc.c', 'IMPORTS', 'unity.h', 'missing-module'),
    },
    },
    "cpp_basic": {
        "broken": 'src/broken.cpp',
    "objects": {
        ('class', 'include/shop/cart.h:shop.Cart'),
        ('class', 'include/shop/cart.h:shop.Cart.Item'),
        ('class', 'include/shop/cart.h:shop.CartList'),
        ('class', 'include/shop/cart.h:shop.Priced'),
        ('class', 'include/shop/money.h:shop.Cents'),
        ('class', 'src/broken.cpp:shop.fine.Half'),
        ('enum', 'include/shop/cart.h:shop.Status'),
        ('file', 'include/shop/cart.h'),
        ('file', 'include/shop/money.h'),
        ('file', 'src/broken.cpp'),
        ('file', 'src/cart.cpp'),
        ('file', 'src/main.cpp'),
        ('file', 'src/money.cpp'),
        ('file', 'tests/cart_test.cpp'),
        ('function', 'include/shop/money.h:shop.twice'),
        ('function', 'src/broken.cpp:shop.fine'),
        ('function', 'src/main.cpp:main'),
        ('function', 'src/money.cpp:shop.detail.pad'),
        ('function', 'src/money.cpp:shop.format'),
        ('function', 'tests/cart_test.cpp:filled'),
        ('method', 'include/shop/cart.h:shop.Cart.size'),
        ('method', 'include/shop/cart.h:shop.Priced.~Priced'),
        ('method', 'src/broken.cpp:shop.fine.Half.ok'),
        ('method', 'src/cart.cpp:shop.Cart.Cart'),
        ('method', 'src/cart.cpp:shop.Cart.add(std::string&)'),
        ('method', 'src/cart.cpp:shop.Cart.add(std::string&,Cents)'),
        ('method', 'src/cart.cpp:shop.Cart.price'),
        ('test', 'tests/cart_test.cpp:CartTest.CountsItems'),
    },
    "CONTAINS": {
        ('include/shop/cart.h', 'include/shop/cart.h:shop.Cart'),
        ('include/shop/cart.h', 'include/shop/cart.h:shop.CartList'),
        ('include/shop/cart.h', 'include/shop/cart.h:shop.Priced'),
        ('include/shop/cart.h', 'include/shop/cart.h:shop.Status'),
        ('include/shop/cart.h:shop.Cart', 'include/shop/cart.h:shop.Cart.Item'),
        ('include/shop/cart.h:shop.Cart', 'include/shop/cart.h:shop.Cart.size'),
        ('include/shop/cart.h:shop.Cart', 'src/cart.cpp:shop.Cart.Cart'),
        ('include/shop/cart.h:shop.Cart', 'src/cart.cpp:shop.Cart.add(std::string&)'),
        ('include/shop/cart.h:shop.Cart', 'src/cart.cpp:shop.Cart.add(std::string&,Cents)'),
        ('include/shop/cart.h:shop.Cart', 'src/cart.cpp:shop.Cart.price'),
        ('include/shop/cart.h:shop.Priced', 'include/shop/cart.h:shop.Priced.~Priced'),
        ('include/shop/money.h', 'include/shop/money.h:shop.Cents'),
        ('include/shop/money.h', 'include/shop/money.h:shop.twice'),
        ('src/broken.cpp', 'src/broken.cpp:shop.fine'),
        ('src/broken.cpp:shop.fine', 'src/broken.cpp:shop.fine.Half'),
        ('src/broken.cpp:shop.fine.Half', 'src/broken.cpp:shop.fine.Half.ok'),
        ('src/main.cpp', 'src/main.cpp:main'),
        ('src/money.cpp', 'src/money.cpp:shop.detail.pad'),
        ('src/money.cpp', 'src/money.cpp:shop.format'),
        ('tests/cart_test.cpp', 'tests/cart_test.cpp:CartTest.CountsItems'),
        ('tests/cart_test.cpp', 'tests/cart_test.cpp:filled'),
    },
    "IMPORTS": {
        ('include/shop/cart.h', 'include/shop/money.h'),
        ('src/cart.cpp', 'include/shop/cart.h'),
        ('src/main.cpp', 'include/shop/cart.h'),
        ('src/main.cpp', 'include/shop/money.h'),
        ('src/money.cpp', 'include/shop/money.h'),
        ('tests/cart_test.cpp', 'include/shop/cart.h'),
    },
    "CALLS": {
        ('src/cart.cpp:shop.Cart.add(std::string&)', 'include/shop/money.h:shop.twice'),
        ('src/main.cpp:main', 'include/shop/cart.h:shop.Cart'),
        ('src/main.cpp:main', 'src/money.cpp:shop.format'),
        ('src/money.cpp:shop.format', 'src/money.cpp:shop.detail.pad'),
        ('tests/cart_test.cpp:CartTest.CountsItems', 'src/money.cpp:shop.format'),
        ('tests/cart_test.cpp:CartTest.CountsItems', 'tests/cart_test.cpp:filled'),
    },
    "unresolved": {
        ('include/shop/cart.h:shop.Cart.size', 'CALLS', 'items_.size', 'dynamic-receiver'),
        ('src/cart.cpp:shop.Cart.add(std::string&)', 'CALLS', 'this.add', 'ambiguous-overload'),
        ('src/cart.cpp:shop.Cart.add(std::string&,Cents)', 'CALLS', 'items_.push_back', 'dynamic-receiver'),
        ('src/cart.cpp:shop.Cart.price', 'CALLS', 'items_.begin', 'dynamic-receiver'),
        ('src/cart.cpp:shop.Cart.price', 'CALLS', 'items_.end', 'dynamic-receiver'),
        ('src/main.cpp:main', 'CALLS', 'cart->add', 'dynamic-receiver'),
        ('src/main.cpp:main', 'CALLS', 'cart->price', 'dynamic-receiver'),
        ('tests/cart_test.cpp:CartTest.CountsItems', 'CALLS', 'filled().size', 'dynamic-receiver'),
        ('tests/cart_test.cpp:filled', 'CALLS', 'c.add', 'dynamic-receiver'),
    },
    },
    "kotlin_basic": {
        "broken": 'src/main/kotlin/shop/Broken.kt',
    "objects": {
        ('class', 'src/main/kotlin/shop/Broken.kt:Half'),
        ('class', 'src/main/kotlin/shop/Cart.kt:Cart'),
        ('class', 'src/main/kotlin/shop/Cart.kt:Carts'),
        ('class', 'src/main/kotlin/shop/util/Money.kt:Money'),
        ('class', 'src/test/kotlin/shop/CartTest.kt:CartTest'),
        ('enum', 'src/main/kotlin/shop/Cart.kt:Status'),
        ('file', 'src/main/kotlin/shop/Broken.kt'),
        ('file', 'src/main/kotlin/shop/Cart.kt'),
        ('file', 'src/main/kotlin/shop/util/Money.kt'),
        ('file', 'src/test/kotlin/shop/CartTest.kt'),
        ('function', 'src/main/kotlin/shop/Broken.kt:fine'),
        ('function', 'src/main/kotlin/shop/Cart.kt:Cart.describe'),
        ('function', 'src/main/kotlin/shop/Cart.kt:total'),
        ('function', 'src/main/kotlin/shop/util/Money.kt:format'),
        ('interface', 'src/main/kotlin/shop/Cart.kt:Priced'),
        ('method', 'src/main/kotlin/shop/Cart.kt:Cart.add'),
        ('method', 'src/main/kotlin/shop/Cart.kt:Cart.empty'),
        ('method', 'src/main/kotlin/shop/Cart.kt:Cart.label'),
        ('method', 'src/main/kotlin/shop/Cart.kt:Cart.price'),
        ('method', 'src/main/kotlin/shop/Cart.kt:Priced.price'),
        ('method', 'src/main/kotlin/shop/util/Money.kt:Money.of'),
        ('method', 'src/test/kotlin/shop/CartTest.kt:CartTest.helper'),
        ('test', 'src/test/kotlin/shop/CartTest.kt:CartTest.addsItems'),
    },
    "CONTAINS": {
        ('src/main/kotlin/shop/Broken.kt', 'src/main/kotlin/shop/Broken.kt:Half'),
        ('src/main/kotlin/shop/Broken.kt', 'src/main/kotlin/shop/Broken.kt:fine'),
        ('src/main/kotlin/shop/Cart.kt', 'src/main/kotlin/shop/Cart.kt:Cart'),
        ('src/main/kotlin/shop/Cart.kt', 'src/main/kotlin/shop/Cart.kt:Carts'),
        ('src/main/kotlin/shop/Cart.kt', 'src/main/kotlin/shop/Cart.kt:Priced'),
        ('src/main/kotlin/shop/Cart.kt', 'src/main/kotlin/shop/Cart.kt:Status'),
        ('src/main/kotlin/shop/Cart.kt', 'src/main/kotlin/shop/Cart.kt:total'),
        ('src/main/kotlin/shop/Cart.kt:Cart', 'src/main/kotlin/shop/Cart.kt:Cart.add'),
        ('src/main/kotlin/shop/Cart.kt:Cart', 'src/main/kotlin/shop/Cart.kt:Cart.describe'),
        ('src/main/kotlin/shop/Cart.kt:Cart', 'src/main/kotlin/shop/Cart.kt:Cart.empty'),
        ('src/main/kotlin/shop/Cart.kt:Cart', 'src/main/kotlin/shop/Cart.kt:Cart.label'),
        ('src/main/kotlin/shop/Cart.kt:Cart', 'src/main/kotlin/shop/Cart.kt:Cart.price'),
        ('src/main/kotlin/shop/Cart.kt:Priced', 'src/main/kotlin/shop/Cart.kt:Priced.price'),
        ('src/main/kotlin/shop/util/Money.kt', 'src/main/kotlin/shop/util/Money.kt:Money'),
        ('src/main/kotlin/shop/util/Money.kt', 'src/main/kotlin/shop/util/Money.kt:format'),
        ('src/main/kotlin/shop/util/Money.kt:Money', 'src/main/kotlin/shop/util/Money.kt:Money.of'),
        ('src/test/kotlin/shop/CartTest.kt', 'src/test/kotlin/shop/CartTest.kt:CartTest'),
        ('src/test/kotlin/shop/CartTest.kt:CartTest', 'src/test/kotlin/shop/CartTest.kt:CartTest.addsItems'),
        ('src/test/kotlin/shop/CartTest.kt:CartTest', 'src/test/kotlin/shop/CartTest.kt:CartTest.helper'),
    },
    "IMPORTS": {
        ('src/main/kotlin/shop/Cart.kt', 'src/main/kotlin/shop/util/Money.kt:Money'),
        ('src/main/kotlin/shop/Cart.kt', 'src/main/kotlin/shop/util/Money.kt:format'),
        ('src/test/kotlin/shop/CartTest.kt', 'src/main/kotlin/shop/util/Money.kt'),
    },
    "CALLS": {
        ('src/main/kotlin/shop/Cart.kt:Cart.describe', 'src/main/kotlin/shop/Cart.kt:Cart.label'),
        ('src/main/kotlin/shop/Cart.kt:Cart.empty', 'src/main/kotlin/shop/Cart.kt:Cart'),
        ('src/main/kotlin/shop/Cart.kt:Cart.label', 'src/main/kotlin/shop/Cart.kt:Cart.price'),
        ('src/main/kotlin/shop/Cart.kt:Cart.label', 'src/main/kotlin/shop/util/Money.kt:Money.of'),
        ('src/main/kotlin/shop/Cart.kt:Cart.label', 'src/main/kotlin/shop/util/Money.kt:format'),
        ('src/main/kotlin/shop/util/Money.kt:Money.of', 'src/main/kotlin/shop/util/Money.kt:Money'),
        ('src/test/kotlin/shop/CartTest.kt:CartTest.addsItems', 'src/main/kotlin/shop/Cart.kt:Cart.empty'),
        ('src/test/kotlin/shop/CartTest.kt:CartTest.addsItems', 'src/main/kotlin/shop/Cart.kt:total'),
        ('src/test/kotlin/shop/CartTest.kt:CartTest.addsItems', 'src/main/kotlin/shop/util/Money.kt:Money.of'),
        ('src/test/kotlin/shop/CartTest.kt:CartTest.addsItems', 'src/main/kotlin/shop/util/Money.kt:format'),
        ('src/test/kotlin/shop/CartTest.kt:CartTest.helper', 'src/main/kotlin/shop/Cart.kt:Cart'),
    },
    "unresolved": {
        ('src/main/kotlin/shop/Cart.kt', 'IMPORTS', 'shop.missing.Gone', 'missing-module'),
        ('src/main/kotlin/shop/Cart.kt:Cart.add', 'CALLS', 'items.add', 'dynamic-receiver'),
        ('src/main/kotlin/shop/Cart.kt:Cart.price', 'CALLS', 'items.sum', 'dynamic-receiver'),
        ('src/main/kotlin/shop/Cart.kt:total', 'CALLS', 'carts.sumOf', 'dynamic-receiver'),
        ('src/main/kotlin/shop/Cart.kt:total', 'CALLS', 'it.price', 'dynamic-receiver'),
        ('src/main/kotlin/shop/util/Money.kt:format', 'CALLS', '"%d.%02d".format', 'dynamic-receiver'),
        ('src/test/kotlin/shop/CartTest.kt:CartTest.addsItems', 'CALLS', 'Cart.empty().add', 'dynamic-receiver'),
        ('src/test/kotlin/shop/CartTest.kt:CartTest.addsItems', 'CALLS', 'cart.price', 'dynamic-receiver'),
    },
    },
    "scala_basic": {
        "broken": 'src/main/scala/shop/Broken.scala',
        "objects": {
            ('class', 'src/main/scala/shop/Broken.scala:Half'),
            ('class', 'src/main/scala/shop/Cart.scala:Cart'),
            ('class', 'src/main/scala/shop/Cart.scala:Carts'),
            ('class', 'src/main/scala/shop/util/Money.scala:Money'),
            ('class', 'src/test/scala/shop/CartSpec.scala:CartSpec'),
            ('class', 'src/test/scala/shop/CartSuite.scala:CartSuite'),
            ('enum', 'src/main/scala/shop/Cart.scala:Status'),
            ('file', 'src/main/scala/shop/Broken.scala'),
            ('file', 'src/main/scala/shop/Cart.scala'),
            ('file', 'src/main/scala/shop/util/Money.scala'),
            ('file', 'src/test/scala/shop/CartSpec.scala'),
            ('file', 'src/test/scala/shop/CartSuite.scala'),
            ('function', 'src/main/scala/shop/Cart.scala:Cart.describe'),
            ('function', 'src/main/scala/shop/Cart.scala:total'),
            ('function', 'src/main/scala/shop/util/Money.scala:format'),
            ('interface', 'src/main/scala/shop/Cart.scala:Priced'),
            ('method', 'src/main/scala/shop/Broken.scala:Half.bad'),
            ('method', 'src/main/scala/shop/Broken.scala:Half.fine'),
            ('method', 'src/main/scala/shop/Cart.scala:Cart.add'),
            ('method', 'src/main/scala/shop/Cart.scala:Cart.count'),
            ('method', 'src/main/scala/shop/Cart.scala:Cart.empty'),
            ('method', 'src/main/scala/shop/Cart.scala:Cart.label'),
            ('method', 'src/main/scala/shop/Cart.scala:Cart.price'),
            ('method', 'src/main/scala/shop/Cart.scala:Priced.price'),
            ('method', 'src/main/scala/shop/util/Money.scala:Money.of'),
            ('method', 'src/test/scala/shop/CartSuite.scala:CartSuite.filled'),
            ('test', 'src/test/scala/shop/CartSpec.scala:CartSpec.A cart.empty.cost nothing'),
            ('test', 'src/test/scala/shop/CartSuite.scala:CartSuite.adds items'),
        },
        "CONTAINS": {
            ('src/main/scala/shop/Broken.scala', 'src/main/scala/shop/Broken.scala:Half'),
            ('src/main/scala/shop/Broken.scala:Half', 'src/main/scala/shop/Broken.scala:Half.bad'),
            ('src/main/scala/shop/Broken.scala:Half', 'src/main/scala/shop/Broken.scala:Half.fine'),
            ('src/main/scala/shop/Cart.scala', 'src/main/scala/shop/Cart.scala:Cart'),
            ('src/main/scala/shop/Cart.scala', 'src/main/scala/shop/Cart.scala:Carts'),
            ('src/main/scala/shop/Cart.scala', 'src/main/scala/shop/Cart.scala:Priced'),
            ('src/main/scala/shop/Cart.scala', 'src/main/scala/shop/Cart.scala:Status'),
            ('src/main/scala/shop/Cart.scala', 'src/main/scala/shop/Cart.scala:total'),
            ('src/main/scala/shop/Cart.scala:Cart', 'src/main/scala/shop/Cart.scala:Cart.add'),
            ('src/main/scala/shop/Cart.scala:Cart', 'src/main/scala/shop/Cart.scala:Cart.count'),
            ('src/main/scala/shop/Cart.scala:Cart', 'src/main/scala/shop/Cart.scala:Cart.describe'),
            ('src/main/scala/shop/Cart.scala:Cart', 'src/main/scala/shop/Cart.scala:Cart.empty'),
            ('src/main/scala/shop/Cart.scala:Cart', 'src/main/scala/shop/Cart.scala:Cart.label'),
            ('src/main/scala/shop/Cart.scala:Cart', 'src/main/scala/shop/Cart.scala:Cart.price'),
            ('src/main/scala/shop/Cart.scala:Priced', 'src/main/scala/shop/Cart.scala:Priced.price'),
            ('src/main/scala/shop/util/Money.scala', 'src/main/scala/shop/util/Money.scala:Money'),
            ('src/main/scala/shop/util/Money.scala', 'src/main/scala/shop/util/Money.scala:format'),
            ('src/main/scala/shop/util/Money.scala:Money', 'src/main/scala/shop/util/Money.scala:Money.of'),
            ('src/test/scala/shop/CartSpec.scala', 'src/test/scala/shop/CartSpec.scala:CartSpec'),
            ('src/test/scala/shop/CartSpec.scala:CartSpec', 'src/test/scala/shop/CartSpec.scala:CartSpec.A cart.empty.cost nothing'),
            ('src/test/scala/shop/CartSuite.scala', 'src/test/scala/shop/CartSuite.scala:CartSuite'),
            ('src/test/scala/shop/CartSuite.scala:CartSuite', 'src/test/scala/shop/CartSuite.scala:CartSuite.adds items'),
            ('src/test/scala/shop/CartSuite.scala:CartSuite', 'src/test/scala/shop/CartSuite.scala:CartSuite.filled'),
        },
        "IMPORTS": {
            ('src/main/scala/shop/Cart.scala', 'src/main/scala/shop/util/Money.scala:Money'),
            ('src/main/scala/shop/Cart.scala', 'src/main/scala/shop/util/Money.scala:format'),
            ('src/test/scala/shop/CartSuite.scala', 'src/main/scala/shop/util/Money.scala'),
        },
        "CALLS": {
            ('src/main/scala/shop/Cart.scala:Cart.add', 'src/main/scala/shop/Cart.scala:Cart'),
            ('src/main/scala/shop/Cart.scala:Cart.empty', 'src/main/scala/shop/Cart.scala:Cart'),
            ('src/main/scala/shop/Cart.scala:Cart.label', 'src/main/scala/shop/Cart.scala:Cart.count'),
            ('src/main/scala/shop/Cart.scala:Cart.label', 'src/main/scala/shop/Cart.scala:total'),
            ('src/main/scala/shop/Cart.scala:Cart.label', 'src/main/scala/shop/util/Money.scala:Money.of'),
            ('src/main/scala/shop/Cart.scala:Cart.label', 'src/main/scala/shop/util/Money.scala:format'),
            ('src/main/scala/shop/util/Money.scala:Money.of', 'src/main/scala/shop/util/Money.scala:Money'),
            ('src/test/scala/shop/CartSpec.scala:CartSpec.A cart.empty.cost nothing', 'src/main/scala/shop/Cart.scala:Cart.empty'),
            ('src/test/scala/shop/CartSpec.scala:CartSpec.A cart.empty.cost nothing', 'src/main/scala/shop/Cart.scala:total'),
            ('src/test/scala/shop/CartSuite.scala:CartSuite.adds items', 'src/main/scala/shop/Cart.scala:Cart.empty'),
            ('src/test/scala/shop/CartSuite.scala:CartSuite.adds items', 'src/main/scala/shop/util/Money.scala:Money.of'),
            ('src/test/scala/shop/CartSuite.scala:CartSuite.adds items', 'src/main/scala/shop/util/Money.scala:format'),
            ('src/test/scala/shop/CartSuite.scala:CartSuite.filled', 'src/main/scala/shop/Cart.scala:Cart'),
        },
        "unresolved": {
            ('src/main/scala/shop/Cart.scala', 'IMPORTS', 'shop.missing.Gone', 'missing-module'),
            ('src/main/scala/shop/Cart.scala:Cart.describe', 'CALLS', 'c.label', 'dynamic-receiver'),
            ('src/main/scala/shop/Cart.scala:total', 'CALLS', 'carts.map', 'dynamic-receiver'),
            ('src/test/scala/shop/CartSuite.scala:CartSuite.adds items', 'CALLS', 'Cart.empty().add', 'dynamic-receiver'),
        },
    },
    "swift_basic": {
        "broken": 'Sources/Shop/Broken.swift',
        "objects": {
            ('class', 'Sources/Pricing/Money.swift:Money'),
            ('class', 'Sources/Shop/Broken.swift:Half'),
            ('class', 'Sources/Shop/Cart+Describe.swift:Cart'),
            ('class', 'Sources/Shop/Cart.swift:Cart'),
            ('class', 'Sources/Shop/Cart.swift:Carts'),
            ('class', 'Sources/Shop/Cart.swift:Item'),
            ('class', 'Tests/ShopTests/CartTests.swift:CartTests'),
            ('enum', 'Sources/Shop/Cart.swift:Status'),
            ('file', 'Sources/Pricing/Money.swift'),
            ('file', 'Sources/Shop/Broken.swift'),
            ('file', 'Sources/Shop/Cart+Describe.swift'),
            ('file', 'Sources/Shop/Cart.swift'),
            ('file', 'Tests/ShopTests/CartTests.swift'),
            ('file', 'Tests/ShopTests/TotalTests.swift'),
            ('function', 'Sources/Pricing/Money.swift:format'),
            ('function', 'Sources/Shop/Cart.swift:total'),
            ('interface', 'Sources/Shop/Cart.swift:Priced'),
            ('method', 'Sources/Pricing/Money.swift:Money.of'),
            ('method', 'Sources/Shop/Broken.swift:Half.bad'),
            ('method', 'Sources/Shop/Broken.swift:Half.fine'),
            ('method', 'Sources/Shop/Cart+Describe.swift:Cart.describe'),
            ('method', 'Sources/Shop/Cart+Describe.swift:Cart.description'),
            ('method', 'Sources/Shop/Cart.swift:Cart.add(_:)'),
            ('method', 'Sources/Shop/Cart.swift:Cart.add(item:)'),
            ('method', 'Sources/Shop/Cart.swift:Cart.count'),
            ('method', 'Sources/Shop/Cart.swift:Cart.empty'),
            ('method', 'Sources/Shop/Cart.swift:Cart.init'),
            ('method', 'Sources/Shop/Cart.swift:Cart.label'),
            ('method', 'Sources/Shop/Cart.swift:Cart.price'),
            ('method', 'Sources/Shop/Cart.swift:Priced.price'),
            ('method', 'Tests/ShopTests/CartTests.swift:CartTests.helper'),
            ('test', 'Tests/ShopTests/CartTests.swift:CartTests.testAddsItems'),
            ('test', 'Tests/ShopTests/TotalTests.swift:totalOfEmptyCarts'),
        },
        "CONTAINS": {
            ('Sources/Pricing/Money.swift', 'Sources/Pricing/Money.swift:Money'),
            ('Sources/Pricing/Money.swift', 'Sources/Pricing/Money.swift:format'),
            ('Sources/Pricing/Money.swift:Money', 'Sources/Pricing/Money.swift:Money.of'),
            ('Sources/Shop/Broken.swift', 'Sources/Shop/Broken.swift:Half'),
            ('Sources/Shop/Broken.swift:Half', 'Sources/Shop/Broken.swift:Half.bad'),
            ('Sources/Shop/Broken.swift:Half', 'Sources/Shop/Broken.swift:Half.fine'),
            ('Sources/Shop/Cart+Describe.swift', 'Sources/Shop/Cart+Describe.swift:Cart'),
            ('Sources/Shop/Cart+Describe.swift:Cart', 'Sources/Shop/Cart+Describe.swift:Cart.describe'),
            ('Sources/Shop/Cart+Describe.swift:Cart', 'Sources/Shop/Cart+Describe.swift:Cart.description'),
            ('Sources/Shop/Cart.swift', 'Sources/Shop/Cart.swift:Cart'),
            ('Sources/Shop/Cart.swift', 'Sources/Shop/Cart.swift:Carts'),
            ('Sources/Shop/Cart.swift', 'Sources/Shop/Cart.swift:Item'),
            ('Sources/Shop/Cart.swift', 'Sources/Shop/Cart.swift:Priced'),
            ('Sources/Shop/Cart.swift', 'Sources/Shop/Cart.swift:Status'),
            ('Sources/Shop/Cart.swift', 'Sources/Shop/Cart.swift:total'),
            ('Sources/Shop/Cart.swift:Cart', 'Sources/Shop/Cart.swift:Cart.add(_:)'),
            ('Sources/Shop/Cart.swift:Cart', 'Sources/Shop/Cart.swift:Cart.add(item:)'),
            ('Sources/Shop/Cart.swift:Cart', 'Sources/Shop/Cart.swift:Cart.count'),
            ('Sources/Shop/Cart.swift:Cart', 'Sources/Shop/Cart.swift:Cart.empty'),
            ('Sources/Shop/Cart.swift:Cart', 'Sources/Shop/Cart.swift:Cart.init'),
            ('Sources/Shop/Cart.swift:Cart', 'Sources/Shop/Cart.swift:Cart.label'),
            ('Sources/Shop/Cart.swift:Cart', 'Sources/Shop/Cart.swift:Cart.price'),
            ('Sources/Shop/Cart.swift:Priced', 'Sources/Shop/Cart.swift:Priced.price'),
            ('Tests/ShopTests/CartTests.swift', 'Tests/ShopTests/CartTests.swift:CartTests'),
            ('Tests/ShopTests/CartTests.swift:CartTests', 'Tests/ShopTests/CartTests.swift:CartTests.helper'),
            ('Tests/ShopTests/CartTests.swift:CartTests', 'Tests/ShopTests/CartTests.swift:CartTests.testAddsItems'),
            ('Tests/ShopTests/TotalTests.swift', 'Tests/ShopTests/TotalTests.swift:totalOfEmptyCarts'),
        },
        "IMPORTS": {
            ('Sources/Shop/Cart+Describe.swift', 'Sources/Pricing/Money.swift:Money'),
            ('Sources/Shop/Cart.swift', 'Sources/Pricing/Money.swift'),
            ('Tests/ShopTests/CartTests.swift', 'Sources/Pricing/Money.swift'),
            ('Tests/ShopTests/CartTests.swift', 'Sources/Shop/Broken.swift'),
            ('Tests/ShopTests/CartTests.swift', 'Sources/Shop/Cart+Describe.swift'),
            ('Tests/ShopTests/CartTests.swift', 'Sources/Shop/Cart.swift'),
            ('Tests/ShopTests/TotalTests.swift', 'Sources/Shop/Broken.swift'),
            ('Tests/ShopTests/TotalTests.swift', 'Sources/Shop/Cart+Describe.swift'),
            ('Tests/ShopTests/TotalTests.swift', 'Sources/Shop/Cart.swift'),
        },
        "CALLS": {
            ('Sources/Pricing/Money.swift:Money.of', 'Sources/Pricing/Money.swift:Money'),
            ('Sources/Shop/Cart+Describe.swift:Cart.describe', 'Sources/Pricing/Money.swift:Money.of'),
            ('Sources/Shop/Cart+Describe.swift:Cart.describe', 'Sources/Shop/Cart.swift:Cart.label'),
            ('Sources/Shop/Cart+Describe.swift:Cart.describe', 'Sources/Shop/Cart.swift:Cart.price'),
            ('Sources/Shop/Cart+Describe.swift:Cart.description', 'Sources/Shop/Cart+Describe.swift:Cart.describe'),
            ('Sources/Shop/Cart.swift:Cart.empty', 'Sources/Shop/Cart.swift:Cart'),
            ('Sources/Shop/Cart.swift:Cart.label', 'Sources/Pricing/Money.swift:Money.of'),
            ('Sources/Shop/Cart.swift:Cart.label', 'Sources/Pricing/Money.swift:format'),
            ('Sources/Shop/Cart.swift:Cart.label', 'Sources/Shop/Cart.swift:Cart.count'),
            ('Sources/Shop/Cart.swift:Cart.label', 'Sources/Shop/Cart.swift:total'),
            ('Tests/ShopTests/CartTests.swift:CartTests.helper', 'Sources/Shop/Cart.swift:Cart'),
            ('Tests/ShopTests/CartTests.swift:CartTests.testAddsItems', 'Sources/Pricing/Money.swift:Money.of'),
            ('Tests/ShopTests/CartTests.swift:CartTests.testAddsItems', 'Sources/Pricing/Money.swift:format'),
            ('Tests/ShopTests/CartTests.swift:CartTests.testAddsItems', 'Sources/Shop/Cart.swift:Cart.empty'),
            ('Tests/ShopTests/TotalTests.swift:totalOfEmptyCarts', 'Sources/Shop/Cart.swift:Cart.empty'),
            ('Tests/ShopTests/TotalTests.swift:totalOfEmptyCarts', 'Sources/Shop/Cart.swift:total'),
        },
        "unresolved": {
            ('Sources/Shop/Cart+Describe.swift', 'IMPORTS', 'Pricing.Gone', 'missing-module'),
            ('Sources/Shop/Cart.swift:Cart.add(_:)', 'CALLS', 'items.append', 'dynamic-receiver'),
            ('Sources/Shop/Cart.swift:Cart.add(item:)', 'CALLS', 'add', 'ambiguous-overload'),
            ('Sources/Shop/Cart.swift:Cart.price', 'CALLS', 'items.reduce', 'dynamic-receiver'),
            ('Sources/Shop/Cart.swift:total', 'CALLS', '$0.price', 'dynamic-receiver'),
            ('Sources/Shop/Cart.swift:total', 'CALLS', 'carts.map', 'dynamic-receiver'),
            ('Sources/Shop/Cart.swift:total', 'CALLS', 'carts.map { $0.price() }.reduce', 'dynamic-receiver'),
            ('Tests/ShopTests/CartTests.swift:CartTests.testAddsItems', 'CALLS', 'Cart.empty().add', 'dynamic-receiver'),
            ('Tests/ShopTests/CartTests.swift:CartTests.testAddsItems', 'CALLS', 'cart.price', 'dynamic-receiver'),
        },
    },
    "php_basic": {
        "broken": 'src/Shop/Broken.php',
        "objects": {
            ('class', 'src/Shop/Broken.php:Half'),
            ('class', 'src/Shop/Cart.php:Cart'),
            ('class', 'src/Shop/HasItems.php:HasItems'),
            ('class', 'src/Util/Money.php:Money'),
            ('class', 'tests/CartTest.php:CartTest'),
            ('enum', 'src/Shop/Status.php:Status'),
            ('file', 'src/Shop/Broken.php'),
            ('file', 'src/Shop/Cart.php'),
            ('file', 'src/Shop/HasItems.php'),
            ('file', 'src/Shop/Priced.php'),
            ('file', 'src/Shop/Status.php'),
            ('file', 'src/Shop/functions.php'),
            ('file', 'src/Util/Money.php'),
            ('file', 'src/Util/functions.php'),
            ('file', 'src/bootstrap.php'),
            ('file', 'tests/CartTest.php'),
            ('function', 'src/Shop/functions.php:total'),
            ('function', 'src/Util/functions.php:format'),
            ('function', 'src/bootstrap.php:log_line'),
            ('interface', 'src/Shop/Priced.php:Priced'),
            ('method', 'src/Shop/Broken.php:Half.bad'),
            ('method', 'src/Shop/Broken.php:Half.fine'),
            ('method', 'src/Shop/Cart.php:Cart.__construct'),
            ('method', 'src/Shop/Cart.php:Cart.add'),
            ('method', 'src/Shop/Cart.php:Cart.count'),
            ('method', 'src/Shop/Cart.php:Cart.empty'),
            ('method', 'src/Shop/Cart.php:Cart.label'),
            ('method', 'src/Shop/Cart.php:Cart.price'),
            ('method', 'src/Shop/HasItems.php:HasItems.size'),
            ('method', 'src/Shop/Priced.php:Priced.price'),
            ('method', 'src/Util/Money.php:Money.__construct'),
            ('method', 'src/Util/Money.php:Money.of'),
            ('method', 'tests/CartTest.php:CartTest.filled'),
            ('test', 'tests/CartTest.php:CartTest.moneyKeepsCents'),
            ('test', 'tests/CartTest.php:CartTest.testAddsItems'),
        },
        "CONTAINS": {
            ('src/Shop/Broken.php', 'src/Shop/Broken.php:Half'),
            ('src/Shop/Broken.php:Half', 'src/Shop/Broken.php:Half.bad'),
            ('src/Shop/Broken.php:Half', 'src/Shop/Broken.php:Half.fine'),
            ('src/Shop/Cart.php', 'src/Shop/Cart.php:Cart'),
            ('src/Shop/Cart.php:Cart', 'src/Shop/Cart.php:Cart.__construct'),
            ('src/Shop/Cart.php:Cart', 'src/Shop/Cart.php:Cart.add'),
            ('src/Shop/Cart.php:Cart', 'src/Shop/Cart.php:Cart.count'),
            ('src/Shop/Cart.php:Cart', 'src/Shop/Cart.php:Cart.empty'),
            ('src/Shop/Cart.php:Cart', 'src/Shop/Cart.php:Cart.label'),
            ('src/Shop/Cart.php:Cart', 'src/Shop/Cart.php:Cart.price'),
            ('src/Shop/HasItems.php', 'src/Shop/HasItems.php:HasItems'),
            ('src/Shop/HasItems.php:HasItems', 'src/Shop/HasItems.php:HasItems.size'),
            ('src/Shop/Priced.php', 'src/Shop/Priced.php:Priced'),
            ('src/Shop/Priced.php:Priced', 'src/Shop/Priced.php:Priced.price'),
            ('src/Shop/Status.php', 'src/Shop/Status.php:Status'),
            ('src/Shop/functions.php', 'src/Shop/functions.php:total'),
            ('src/Util/Money.php', 'src/Util/Money.php:Money'),
            ('src/Util/Money.php:Money', 'src/Util/Money.php:Money.__construct'),
            ('src/Util/Money.php:Money', 'src/Util/Money.php:Money.of'),
            ('src/Util/functions.php', 'src/Util/functions.php:format'),
            ('src/bootstrap.php', 'src/bootstrap.php:log_line'),
            ('tests/CartTest.php', 'tests/CartTest.php:CartTest'),
            ('tests/CartTest.php:CartTest', 'tests/CartTest.php:CartTest.filled'),
            ('tests/CartTest.php:CartTest', 'tests/CartTest.php:CartTest.moneyKeepsCents'),
            ('tests/CartTest.php:CartTest', 'tests/CartTest.php:CartTest.testAddsItems'),
        },
        "IMPORTS": {
            ('src/Shop/Cart.php', 'src/Util/Money.php:Money'),
            ('src/Shop/Cart.php', 'src/Util/functions.php:format'),
            ('src/bootstrap.php', 'src/Shop/functions.php'),
            ('src/bootstrap.php', 'src/Util/functions.php'),
            ('tests/CartTest.php', 'src/Shop/Cart.php:Cart'),
            ('tests/CartTest.php', 'src/Shop/functions.php:total'),
            ('tests/CartTest.php', 'src/Util/Money.php:Money'),
        },
        "CALLS": {
            ('src/Shop/Cart.php:Cart.empty', 'src/Shop/Cart.php:Cart'),
            ('src/Shop/Cart.php:Cart.label', 'src/Shop/Cart.php:Cart.count'),
            ('src/Shop/Cart.php:Cart.label', 'src/Shop/functions.php:total'),
            ('src/Shop/Cart.php:Cart.label', 'src/Util/Money.php:Money.of'),
            ('src/Shop/Cart.php:Cart.label', 'src/Util/functions.php:format'),
            ('src/Shop/functions.php:total', 'src/bootstrap.php:log_line'),
            ('src/Util/Money.php:Money.of', 'src/Util/Money.php:Money'),
            ('tests/CartTest.php:CartTest.filled', 'src/Shop/Cart.php:Cart'),
            ('tests/CartTest.php:CartTest.moneyKeepsCents', 'src/Util/Money.php:Money.of'),
            ('tests/CartTest.php:CartTest.testAddsItems', 'src/Shop/Cart.php:Cart.empty'),
            ('tests/CartTest.php:CartTest.testAddsItems', 'src/Shop/functions.php:total'),
        },
        "unresolved": {
            ('src/Shop/Cart.php', 'IMPORTS', 'App.Missing.Gone', 'missing-module'),
            ('src/Shop/Cart.php:Cart.count', 'CALLS', '$this->size', 'unknown-attribute'),
            ('src/Shop/functions.php:total', 'CALLS', '$c->price', 'dynamic-receiver'),
            ('tests/CartTest.php:CartTest.moneyKeepsCents', 'CALLS', '$this->assertSame', 'unknown-attribute'),
            ('tests/CartTest.php:CartTest.testAddsItems', 'CALLS', '$cart->price', 'dynamic-receiver'),
            ('tests/CartTest.php:CartTest.testAddsItems', 'CALLS', '$this->assertSame', 'unknown-attribute'),
            ('tests/CartTest.php:CartTest.testAddsItems', 'CALLS', 'Cart::empty()->add(150)', 'dynamic-receiver'),
        },
    },
}


indexed = indexed_fixture(GOLDEN)


# --- details of single objects ---------------------------------------------------------------

def test_c_header_prototype_docs_go_to_the_definition(tmp_path):
    """One object per function, the definition; the header's doc comment is its docstring."""
    from vitalrag.graph.memory import MemoryStore
    from vitalrag.ingest import index_repository

    store = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "c_basic", store, name="fx", workers=1)
    add = {o.id: o for o in store.find_objects(repo="fx", path="src/calc.c")}["fx:src/calc.c:add_numbers"]
    assert add.docstring == "Adds two numbers." and add.signature == "int add_numbers(int a, int b)"
    assert not [o for o in store.find_objects(repo="fx", path="include/calc.h") if o.name == "add_numbers"]


def test_c_typedef_struct_is_one_object_named_by_the_typedef():
    facts = _facts("include/types.h", (FIXTURES / "c_basic/include/types.h").read_text())
    objs = _by_qualname(facts)
    assert "point" not in objs
    point = objs["point_t"]
    assert (point.kind, point.signature, point.docstring) == ("class", "typedef struct point", "A point in the plane.")
    assert (point.start_line, point.end_line) == (5, 8)
    assert objs["size_type"].kind == "class" and objs["color"].kind == "enum"


def test_a_header_that_reads_as_cpp_is_extracted_as_cpp():
    assert _facts("x.h", "int add(int a, int b) { return a + b; }\n").language == "c"
    cpp = _facts("x.h", "namespace n {\nclass A {\n  int f() { return 1; }\n};\n}\n")
    assert cpp.language == "cpp" and {o.qualname for o in cpp.objects} == {"n.A", "n.A.f"}


def test_cpp_out_of_class_definitions_overloads_and_gtest():
    facts = _facts("src/cart.cpp", (FIXTURES / "cpp_basic/src/cart.cpp").read_text())
    objs = _by_qualname(facts)
    assert {"shop.Cart.add(std::string&,Cents)", "shop.Cart.add(std::string&)", "shop.Cart.price"} <= set(objs)
    assert all(objs[q].kind == "method" for q in objs)
    test = _facts("t/a_test.cc", "TEST_F(Fixture, Works) {\n  go();\n}\n").objects[0]
    assert (test.kind, test.qualname, test.signature) == ("test", "Fixture.Works", "TEST_F(Fixture, Works)")


def test_unity_run_test_marks_its_functions_as_tests():
    facts = _facts("tests/test_calc.c", (FIXTURES / "c_basic/tests/test_calc.c").read_text())
    kinds = {o.name: o.kind for o in facts.objects}
    assert kinds == {"test_add_numbers": "test", "scales_points": "test", "fixture": "function",
                     "main": "function"}


def test_index_then_search_finds_a_c_function(tmp_path):
    """The issue's repro: a C function in a mixed repository is indexed and found."""
    import json

    from click.testing import CliRunner

    from vitalrag.cli import main

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.c").write_text("/* Adds two numbers. */\nint add_numbers(int a, int b)\n{\n    return a + b;\n}\n")
    (repo / "a.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    (repo / "DEPLOY.md").write_text("# Deploy\n\nRun the release script.\n")
    runner = CliRunner()
    store = tmp_path / "idx"
    result = runner.invoke(main, ["index", str(repo), "--store", str(store), "--name", "mixed",
                                  "--model", "hashing", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["files"] >= 2
    out = runner.invoke(main, ["search", "add numbers", "--store", str(store), "--json", "-k", "3"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)[0]["view"]["object_id"] == "mixed:calc.c:add_numbers"


def test_kotlin_kinds_companions_extensions_and_tests():
    facts = _facts("src/main/kotlin/shop/Cart.kt", (FIXTURES / "kotlin_basic/src/main/kotlin/shop/Cart.kt").read_text())
    objs = _by_qualname(facts)
    assert {q: o.kind for q, o in objs.items() if q in ("Priced", "Status", "Carts", "Cart.empty")} == {
        "Priced": "interface", "Status": "enum", "Carts": "class", "Cart.empty": "method"}
    assert facts.parents[objs["Cart.empty"].id] == objs["Cart"].id  # a companion's function
    assert facts.parents[objs["Cart.describe"].id] == objs["Cart"].id  # an extension of Cart
    assert objs["Cart"].docstring == "A shopping cart." and objs["Cart.add"].signature == "fun add(cents: Long): Cart"
    assert facts.namespace == "shop"
    test = _facts("T.kt", "class T {\n    @Test\n    fun works() {}\n    fun plain() {}\n}\n")
    assert {o.name: o.kind for o in test.objects} == {"T": "class", "works": "test", "plain": "method"}


def test_scala_companions_extensions_and_test_blocks():
    facts = _facts("src/main/scala/shop/Cart.scala",
                   (FIXTURES / "scala_basic/src/main/scala/shop/Cart.scala").read_text())
    objs = _by_qualname(facts)
    assert {q: o.kind for q, o in objs.items() if q in ("Priced", "Status", "Carts", "Cart.empty")} == {
        "Priced": "interface", "Status": "enum", "Carts": "class", "Cart.empty": "method"}
    assert facts.parents[objs["Cart.empty"].id] == objs["Cart"].id  # the companion object's def
    assert facts.parents[objs["Cart.describe"].id] == objs["Cart"].id  # an extension of Cart
    assert objs["Cart"].docstring == "A shopping cart." and objs["Cart.add"].signature == "def add(cents: Long): Cart"
    assert facts.namespace == "shop"
    spec = 'class S extends AnyFlatSpec {\n  "A cart" should "add" in { go() }\n  it should "sum" in {}\n}\n'
    assert {o.qualname: o.kind for o in _facts("src/test/scala/S.scala", spec).objects} == {
        "S": "class", "S.A cart should add": "test", "S.it should sum": "test"}
    assert {o.qualname for o in _facts("src/main/scala/S.scala", spec).objects} == {"S"}  # not a test file
    junit = _facts("T.scala", "class T {\n  @Test def works(): Unit = ()\n  def plain(): Unit = ()\n}\n")
    assert {o.name: o.kind for o in junit.objects} == {"T": "class", "works": "test", "plain": "method"}
    imports = _facts("A.scala", "package a\npackage b\nimport x.y.{C, D => E, F => _}\nimport z.{given, *}\n")
    assert imports.namespace == "a.b"
    assert [(r.name, r.data.alias, r.data.whole) for r in imports.refs] == [
        ("x.y.C", None, False), ("x.y.D", "E", False), ("z", None, True)]


def test_swift_kinds_extensions_overloads_and_tests():
    facts = _facts("Sources/Shop/Cart.swift", (FIXTURES / "swift_basic/Sources/Shop/Cart.swift").read_text())
    objs = _by_qualname(facts)
    assert {q: o.kind for q, o in objs.items() if q in ("Priced", "Status", "Carts", "Item", "Cart.init")} == {
        "Priced": "interface", "Status": "enum", "Carts": "class", "Item": "class", "Cart.init": "method"}
    assert objs["Cart"].docstring == "A shopping cart." and objs["Cart.add(_:)"].signature == "func add(_ cents: Int) -> Cart"
    assert facts.namespace == "Shop"
    same = _facts("S.swift", "struct S {}\nextension S {\n  var twice: Int { 2 }\n}\nextension Other {}\n")
    objs = _by_qualname(same)
    assert set(objs) == {"S", "S.twice", "Other"}  # an extension of S in S's file adds to S
    assert same.parents[objs["S.twice"].id] == objs["S"].id and objs["S.twice"].signature == "var twice: Int"
    assert same.data.extensions == ((objs["Other"].id, "Other"),)
    tests = _facts("Tests/T/T.swift", "class T: XCTestCase {\n  func testA() {}\n  func testB(x: Int) {}\n}\n"
                   "@Test(\"named\") func works() {}\n")
    assert {o.qualname: o.kind for o in tests.objects} == {"T": "class", "T.testA": "test", "T.testB": "method",
                                                            "works": "test"}


def test_swift_calls_behind_operators_are_read():
    """tree-sitter-swift reads ``x + f(y)`` as ``(x + f)(y)``: the callee is still ``f``."""
    facts = _facts("a.swift", "func g() -> Int {\n  return 1 + f(2) * h(3)\n}\nfunc h() { !f(1) }\n")
    assert sorted(r.name for r in facts.refs if r.kind == "call") == ["f", "f", "h"]


def test_php_kinds_imports_and_tests():
    facts = _facts("src/Shop/Cart.php", (FIXTURES / "php_basic/src/Shop/Cart.php").read_text())
    objs = _by_qualname(facts)
    assert objs["Cart"].docstring == "A shopping cart." and objs["Cart.add"].signature == "public function add(int $cents): self"
    assert facts.namespace == "App.Shop"
    uses = _facts("a.php", "<?php\nuse A\\B\\{C, D as E};\nuse function A\\f;\nuse const A\\K;\n"
                  "require_once __DIR__ . '/x.php';\ninclude('y.php');\n")
    assert [(r.name, getattr(r.data, "alias", None), getattr(r.data, "beside", None)) for r in uses.refs] == [
        ("A.B.C", None, None), ("A.B.D", "E", None), ("A.f", None, None), ("/x.php", None, True),
        ("y.php", None, False)]
    tests = _facts("tests/Unit/CartTest.php", "<?php\nclass T extends Base {\n  #[Test]\n  public function a() {}\n"
                   "  public function testB() {}\n  public function c() {}\n}\n"
                   "test('adds items', function () { go(); });\nit(\"sums\", fn () => 1);\n")
    assert {o.qualname: o.kind for o in tests.objects} == {"T": "class", "T.a": "test", "T.testB": "test",
                                                            "T.c": "method", "adds items": "test", "sums": "test"}
    outside = _facts("src/T.php", "<?php\nclass T { public function testB() {} }\ntest('x', function () {});\n")
    assert {o.qualname: o.kind for o in outside.objects} == {"T": "class", "T.testB": "method"}


def test_php_bare_calls_never_reach_methods_and_qualified_functions_resolve():
    """PHP has no implicit ``$this``: ``count()`` in a class with a ``count`` method is the builtin."""
    from vitalrag.ingest.facts import resolve_all

    a = _facts("src/A.php", "<?php\nnamespace N;\nclass A {\n  function count() {}\n"
               "  function run() { count([]); \\N\\Util\\helper(); \\strlen('x'); }\n}\n")
    b = _facts("src/Util.php", "<?php\nnamespace N\\Util;\nfunction helper() {}\n")
    res = resolve_all(REGISTRY["php"].resolver("r", [a, b]), [a, b])
    calls = {(e.source, e.target) for e in res.edges if e.kind == "CALLS"}
    assert calls == {("r:src/A.php:A.run", "r:src/Util.php:helper")}
    assert not res.unresolved


def test_a_definition_inside_the_caller_shadows_the_class_member():
    """Lexical scope (Kotlin, Scala, Swift): a class or def inside the caller wins over its class's own."""
    from vitalrag.ingest.facts import resolve_all

    a = _facts("A.scala", "class A {\n  case class Config()\n  def f() = {\n    case class Config()\n    Config()\n  }\n"
               "  def g() = Config()\n}\n")
    res = resolve_all(REGISTRY["scala"].resolver("r", [a]), [a])
    assert {(e.source, e.target) for e in res.edges if e.kind == "CALLS"} == {
        ("r:A.scala:A.f", "r:A.scala:A.f.Config"), ("r:A.scala:A.g", "r:A.scala:A.Config")}
