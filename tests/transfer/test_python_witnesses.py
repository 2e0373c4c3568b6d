"""Each witness family on Python program pairs, in both directions."""

from __future__ import annotations

import json

import pytest



def by_family(decision):
    return {w.family: w for w in decision.witnesses}


TOTAL = "shop:shop/pricing.py:Cart.total"
WITH_TAX = "shop:shop/pricing.py:with_tax"

GOOD_TOTAL = """\
def total(self, rate=TAX_RATE):
    return with_tax(self.subtotal(), rate)
"""


def assert_transfer(decision, family):
    assert decision.chosen == "alternative", decision.reason
    assert by_family(decision)[family].direction == 1


def assert_abstain(decision, family, direction=-1):
    assert decision.chosen == "default", decision.reason
    assert by_family(decision)[family].direction == direction


# -- syntax repair ----------------------------------------------------------------
NO_COLON = GOOD_TOTAL.replace("TAX_RATE):", "TAX_RATE)")


def test_syntax_repair_transfers(choose):
    d = choose(TOTAL, NO_COLON, GOOD_TOTAL)
    assert_transfer(d, "syntax")
    assert by_family(d)["syntax"].evidence["default"]["error_lines"]


def test_syntax_break_abstains(choose):
    assert_abstain(choose(TOTAL, GOOD_TOTAL, NO_COLON), "syntax")


def test_both_broken_is_a_tie(choose):
    broken = "def total(self rate):\n    return with_tax(self.subtotal(), rate\n"
    d = choose(TOTAL, NO_COLON, broken)
    assert_abstain(d, "syntax", direction=0)


def test_indented_method_parses(choose):
    indented = "    def total(self, rate=TAX_RATE):\n        return with_tax(self.subtotal(), rate)\n"
    d = choose(TOTAL, indented, GOOD_TOTAL)
    assert by_family(d)["syntax"].evidence["default"]["valid"]


# -- interface consistency --------------------------------------------------------
@pytest.mark.parametrize("bad_call", [
    "with_tax(self.subtotal(), rate, 3)",       # too many positionals
    "with_tax()",                               # missing the required argument
    "with_tax(self.subtotal(), rat=rate)",      # unknown keyword
    "with_tax(self.subtotal(), price=1)",       # given twice
    "money.round_cents(self.subtotal(), 2)",    # module attribute, wrong arity
    "Money()",                                  # constructor: amount is required
    "self.add('x')",                            # bound method: price missing
    "Cart.describe(self, 1)",                   # staticmethod through the class: one parameter
])
def test_interface_fix_transfers(choose, bad_call):
    default = f"def total(self, rate=TAX_RATE):\n    return {bad_call}\n"
    alternative = "def total(self, rate=TAX_RATE):\n    return with_tax(self.subtotal(), rate)\n"
    d = choose(TOTAL, default, alternative)
    assert_transfer(d, "interface")
    calls = by_family(d)["interface"].evidence["default"]["calls"]
    assert [c["fits"] for c in calls if c["call"].startswith(bad_call.split("(")[0])] == [False]


@pytest.mark.parametrize("good_call", [
    "with_tax(self.subtotal())",                      # default fills rate
    "with_tax(price=self.subtotal(), rate=rate)",     # keywords
    "money.convert(1, 2, 3, rate=rate, extra=1)",     # *args and **kwargs absorb the rest
    "Money(self.subtotal(), currency='USD')",
    "self.describe(('a', 1, 2))",                     # staticmethod through self: no binding
    "apply_discount(*self.items)",                    # unpacked arguments may fill anything
])
def test_fitting_calls_are_not_flagged(choose, good_call):
    program = f"def total(self, rate=TAX_RATE):\n    return {good_call}\n"
    d = choose(TOTAL, program, program)
    w = by_family(d)["interface"]
    assert w.evidence["default"]["unfit"] == 0, w.evidence
    assert w.evidence["default"]["checked"] >= 1


def test_keyword_only_parameter_is_not_positional(choose):
    default = "def with_tax(price, rate=TAX_RATE):\n    return apply_discount(price, rate, 1.0)\n"
    alternative = "def with_tax(price, rate=TAX_RATE):\n    return apply_discount(price, rate, floor=1.0)\n"
    d = choose(WITH_TAX, default, alternative)
    assert by_family(d)["interface"].direction == 1
    assert by_family(d)["compactness"].direction == 0  # longer, but guarded by the interface fix
    assert d.chosen == "alternative"


def test_interface_break_abstains(choose):
    bad = "def total(self, rate=TAX_RATE):\n    return with_tax(self.subtotal(), rate, 3)\n"
    assert_abstain(choose(TOTAL, GOOD_TOTAL, bad), "interface")


def test_unknown_callee_counts_as_unfit(choose):
    bad = "def total(self, rate=TAX_RATE):\n    return with_taxes(self.subtotal(), rate)\n"
    d = choose(TOTAL, bad, GOOD_TOTAL)
    assert_transfer(d, "interface")
    assert by_family(d)["names"].direction == 1


# -- suspicious names -------------------------------------------------------------
def test_misspelled_self_attribute(choose):
    bad = "def subtotal(self):\n    return sum(p * q for _, p, q in self.itmes)\n"
    good = "def subtotal(self):\n    return sum(p * q for _, p, q in self.items)\n"
    target = "shop:shop/pricing.py:Cart.subtotal"
    d = choose(target, bad, good)
    assert_transfer(d, "names")
    assert [i["name"] for i in by_family(d)["names"].evidence["default"]] == ["self.itmes"]
    assert_abstain(choose(target, good, bad), "names")


def test_hallucinated_helper(choose):
    bad = "def total(self, rate=TAX_RATE):\n    value = _normalise(self.subtotal())\n    return with_tax(value, rate)\n"
    d = choose(TOTAL, bad, GOOD_TOTAL)
    assert_transfer(d, "names")
    assert_abstain(choose(TOTAL, GOOD_TOTAL, bad), "names")


def test_module_member_must_exist(choose):
    bad = "def total(self, rate=TAX_RATE):\n    return money.round_cent(self.subtotal())\n"
    good = "def total(self, rate=TAX_RATE):\n    return money.round_cents(self.subtotal())\n"
    d = choose(TOTAL, bad, good)
    assert_transfer(d, "names")
    assert by_family(d)["names"].evidence["default"][0]["name"] == "money.round_cent"


def test_names_in_scope_are_not_suspicious(choose):
    program = (
        "def total(self, rate=TAX_RATE):\n"
        "    import math\n"
        "    parts = [round_cents(p) for _, p, _ in self.items]\n"
        "    with open(__file__) as fh:\n"
        "        pass\n"
        "    try:\n        x = len(parts)\n    except ValueError as err:\n        raise err\n"
        "    if (n := x):\n        self.cache = n\n"
        "    return math.fsum(parts) * Money(1).amount + self.owner.count('a') + self.cache\n"
    )
    d = choose(TOTAL, program, program)
    assert by_family(d)["names"].evidence["default"] == []


def test_new_function_in_an_indexed_file(choose):
    target = "shop:shop/pricing.py:net_price"
    good = "def net_price(price):\n    return apply_discount(price, TAX_RATE)\n"
    bad = "def net_price(price):\n    return apply_discount(price)\n"
    assert_transfer(choose(target, bad, good), "interface")


# -- compactness ------------------------------------------------------------------
LONG_TOTAL = """\
def total(self, rate=TAX_RATE):
    subtotal = self.subtotal()
    result = with_tax(subtotal, rate)
    return result
"""


def test_shorter_valid_alternative_transfers(choose):
    assert_transfer(choose(TOTAL, LONG_TOTAL, GOOD_TOTAL), "compactness")


def test_longer_alternative_abstains(choose):
    assert_abstain(choose(TOTAL, GOOD_TOTAL, LONG_TOTAL), "compactness")


def test_witness_against_blocks_compactness(choose):
    # shorter, but reads a name nothing binds: names favours the default
    short_bad = "def total(self, rate=TAX_RATE):\n    return with_tax(subtotal, rate)\n"
    d = choose(TOTAL, LONG_TOTAL, short_bad)
    w = by_family(d)
    assert d.chosen == "default"
    assert w["names"].direction == -1
    assert w["compactness"].direction == 0 and w["compactness"].evidence["blocked_by"] == ["names"]


def test_compactness_needs_both_programs_valid(choose):
    short_broken = "def total(self, rate=TAX_RATE)\n    return with_tax(self.subtotal(), rate)\n"
    d = choose(TOTAL, LONG_TOTAL, short_broken)
    assert d.chosen == "default"
    assert by_family(d)["compactness"].direction == 0


# -- ties and conflicts -----------------------------------------------------------
def test_identical_programs_abstain(choose):
    d = choose(TOTAL, GOOD_TOTAL, GOOD_TOTAL)
    assert d.chosen == "default"
    assert all(w.direction == 0 and not w.differs for w in d.witnesses)


def test_equal_flaws_abstain(choose):
    a = "def total(self, rate=TAX_RATE):\n    return with_tax(self.subtotal(), rate, 1)\n"
    b = "def total(self, rate=TAX_RATE):\n    return with_tax(self.subtotal(), rate, 2)\n"
    d = choose(TOTAL, a, b)
    assert d.chosen == "default"
    assert by_family(d)["interface"].direction == 0


def test_conflicting_witnesses_abstain_in_the_full_gate(choose):
    # the alternative repairs the syntax but reads an undefined name
    alternative = "def total(self, rate=TAX_RATE):\n    return with_tax(self.subtotl(), rate)\n"
    d = choose(TOTAL, NO_COLON, alternative)
    w = by_family(d)
    assert w["syntax"].direction == 1 and w["names"].direction == -1
    assert d.chosen == "default"
    assert choose(TOTAL, NO_COLON, alternative, gate="no-veto").chosen == "alternative"


def test_decision_is_json(choose):
    d = choose(TOTAL, NO_COLON, GOOD_TOTAL)
    data = json.loads(json.dumps(d.to_dict()))
    assert data["chosen"] == "alternative" and data["program"] == GOOD_TOTAL
    assert {w["family"] for w in data["witnesses"]} == {"syntax", "interface", "names", "compactness"}
    assert all(w["direction"] in (-1, 0, 1) for w in data["witnesses"])
