"""Replicas answer odd query values with a 4xx (or the API's own error), never a 5xx: digits that
`str.isdigit` accepts and `int` rejects ("²"), and numbers too long for `int`."""
import pytest
from fastapi.testclient import TestClient

from armbench.domains import DOMAINS
from armbench.replicas.serve import load_reference
from armbench.replicas.web.listing import whole_number

HUGE = "9" * 4301
ODD = {
    "gpus": ["/gpus?page=²", "/gpus?year=²", f"/gpus?page={HUGE}", f"/gpus?year={HUGE}", "/gpus?page=٣"],
    "funds": ["/funds?page=²", f"/funds?page={HUGE}", f"/funds?max_minimum={HUGE}", "/funds?expense_min=²"],
    "worldbank": [f"/v2/country?page={HUGE}&format=json", "/v2/country?per_page=²&format=json",
                  f"/v2/country/USA/indicator/SP.POP.TOTL?mrv={HUGE}&format=json"],
}


@pytest.fixture(scope="module")
def clients():
    return {name: TestClient(load_reference(DOMAINS[name].app)()) for name in ODD}


@pytest.mark.parametrize(("domain", "path"), [(d, p) for d, paths in ODD.items() for p in paths])
def test_an_odd_number_is_a_client_error_never_a_server_error(clients, domain, path):
    assert clients[domain].get(path).status_code < 500


@pytest.mark.parametrize(("text", "number"), [("12", 12), ("0", 0), ("²", None), ("٣", None), ("", None),
                                              ("1" * 10, None), ("-1", None), (" 1", None)])
def test_whole_numbers_are_short_ascii_digits(text, number):
    assert whole_number(text) == number
