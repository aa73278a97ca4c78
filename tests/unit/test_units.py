"""Numbers in replies and tool results (skillbank._units): what an answer_unit lesson is learned
and checked by."""

from hypothesis import given, strategies as st

from skillbank._units import numbers_in, numeric_fields, states


@given(st.integers(min_value=100, max_value=10**7))
def test_an_amount_in_cents_written_any_usual_way_is_read_as_euros(cents):
    euros = cents / 100
    for text in (f"{euros:.2f} euros", f"€{euros:,.2f}", f"{euros:.2f}".replace(".", ",") + " €"):
        assert states(numbers_in(text), euros), text
    assert states(numbers_in(f"{cents} cents"), cents)


def test_numbers_nested_in_a_json_result_are_found_and_flags_are_not():
    result = '{"accounts": [{"id": "AC-1", "balance_cents": 24175, "open": true}, {"balance_cents": 5}]}'
    assert numeric_fields(result) == [("balance_cents", 24175.0), ("balance_cents", 5.0)]
    assert numeric_fields("not json") == [] and numeric_fields(None) == []


def test_digits_inside_ids_are_not_amounts():
    said = numbers_in("Train IC204 and account AC-310")
    assert not states(said, 204) and not states(said, 310)
