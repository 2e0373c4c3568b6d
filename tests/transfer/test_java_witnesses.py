"""The witness families on Java methods of the fixture shop."""

from __future__ import annotations

import pytest

TOTAL = "shopj:src/com/shop/Cart.java:Cart.total(double)"
ITEM_TOTAL = "shopj:src/com/shop/Cart.java:Cart.Item.total()"

GOOD = """\
public long total(double rate) {
    return Money.withTax(subtotal(), rate);
}
"""


def by_family(decision):
    return {w.family: w for w in decision.witnesses}


def test_method_snippet_is_wrapped_and_parses(choose):
    d = choose(TOTAL, GOOD, GOOD)
    assert by_family(d)["syntax"].evidence["default"]["valid"]
    assert d.chosen == "default"
    assert all(w.direction == 0 for w in d.witnesses)


@pytest.mark.parametrize("broken", [
    GOOD.replace("rate);", "rate)"),            # a missing semicolon
    GOOD.rstrip().removesuffix("}") + "\n",     # a missing closing brace
])
def test_syntax_repair_both_directions(choose, broken):
    d = choose(TOTAL, broken, GOOD)
    assert d.chosen == "alternative" and by_family(d)["syntax"].direction == 1
    d = choose(TOTAL, GOOD, broken)
    assert d.chosen == "default" and by_family(d)["syntax"].direction == -1


@pytest.mark.parametrize("bad", [
    "Money.withTax(subtotal())",          # static method, one argument short
    "subtotal(rate)",                     # no overload of subtotal takes one
    "Money.format()",                     # varargs still needs the fixed part
    "new Item(\"a\", 1).total()",         # constructor arity
])
def test_interface_fix_transfers_and_break_abstains(choose, bad):
    program = f"public long total(double rate) {{\n    return {bad};\n}}\n"
    d = choose(TOTAL, program, GOOD)
    assert by_family(d)["interface"].direction == 1, by_family(d)["interface"].evidence
    assert d.chosen == "alternative"
    d = choose(TOTAL, GOOD, program)
    assert by_family(d)["interface"].direction == -1
    assert d.chosen == "default"


def test_overloads_by_arity_and_varargs_fit(choose):
    program = (
        "public long total(double rate) {\n"
        "    add(\"a\", 1);\n    add(\"a\", 1, 2);\n    this.add(\"b\", 2L);\n"
        "    String s = Money.format(1, \"EUR\") + Money.format(1, \"EUR\", 2, 3);\n"
        "    Item item = new Item(owner, 1, 1);\n"
        "    return Money.withTax(item.total() + Math.round(Money.TAX), rate) + s.length() + hashCode();\n"
        "}\n"
    )
    d = choose(TOTAL, program, program)
    w = by_family(d)
    assert w["interface"].evidence["default"]["unfit"] == 0, w["interface"].evidence
    assert w["interface"].evidence["default"]["checked"] >= 6
    assert w["names"].evidence["default"] == []


def test_misspelled_field_and_hallucinated_helper(choose):
    bad = "long total() {\n    return this.cnts * qty + roundUp(qty);\n}\n"
    good = "long total() {\n    return this.cents * qty;\n}\n"
    d = choose(ITEM_TOTAL, bad, good)
    names = {i["name"] for i in by_family(d)["names"].evidence["default"]}
    assert names == {"this.cnts", "roundUp"}
    assert d.chosen == "alternative"
    assert choose(ITEM_TOTAL, good, bad).chosen == "default"


def test_outer_class_members_are_in_scope(choose):
    # a nested class reads its own fields; the outer class's methods are visible too
    program = "long total() {\n    return cents * qty + name.length();\n}\n"
    d = choose(ITEM_TOTAL, program, program)
    assert by_family(d)["names"].evidence["default"] == []


def test_compactness_and_its_guard(choose):
    long = ("public long total(double rate) {\n    long sub = subtotal();\n"
            "    long taxed = Money.withTax(sub, rate);\n    return taxed;\n}\n")
    assert choose(TOTAL, long, GOOD).chosen == "alternative"
    assert choose(TOTAL, GOOD, long).chosen == "default"
    short_bad = "public long total(double rate) {\n    return Money.withTax(sub, rate);\n}\n"
    d = choose(TOTAL, long, short_bad)
    assert d.chosen == "default"
    assert by_family(d)["compactness"].evidence["blocked_by"] == ["names"]


def test_whole_class_snippet(choose):
    target = "shopj:src/com/shop/Money.java:Money"
    good = ("public final class Money {\n    public static long withTax(long cents, double rate) {\n"
            "        return Math.round(cents * (1 + rate));\n    }\n}\n")
    bad = good.replace("Math.round(cents", "Math.round(cent")
    d = choose(target, bad, good)
    assert not by_family(d)["syntax"].evidence["default"]["error_lines"]
    assert d.chosen == "alternative" and by_family(d)["names"].direction == 1
