"""What the fuzz tests share: one settings profile (fixed seed, no deadline, no example database)
and the hostile values they draw from (numbers in every odd spelling, junk text, long strings)."""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# derandomize: the examples are a function of the test alone, the same on every run and machine;
# database=None: nothing is written to .hypothesis/ and no earlier failure is replayed first.
FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def examples(full: int) -> int:
    """How many examples a fuzz test draws: `full` in CI and wherever ARMBENCH_FUZZ is not "quick";
    a quarter of them in `make test` and `make test-fast` on a developer's machine (the Makefile's FUZZ setting)."""
    return max(1, full // 4) if os.environ.get("ARMBENCH_FUZZ") == "quick" else full


ODD_DIGITS = "²³¹⁰٣٤۵६০๓０１"  # superscripts, Arabic-Indic, Devanagari, Bengali, Thai, full-width: isdigit() or isnumeric(), not ASCII
LONG = [4_301, 5_000, 20_000]  # 4,301 digits: past int()'s limit; 20,000: a long query string

ascii_digits = st.one_of(
    st.integers(min_value=0, max_value=10**12).map(str),
    st.text(alphabet="0123456789", min_size=1, max_size=60),
    st.sampled_from(LONG).map(lambda n: "9" * n),
)
unicode_digits = st.one_of(
    st.text(alphabet=ODD_DIGITS, min_size=1, max_size=8),
    st.text(alphabet=st.characters(categories=["Nd", "No", "Nl"]), min_size=1, max_size=6),
    st.tuples(ascii_digits, st.sampled_from(ODD_DIGITS)).map("".join),
)
signed = st.one_of(
    st.integers(max_value=-1).map(str),
    st.sampled_from(["-0", "+1", "+0", "-", "+", "--1", "−1"]),  # the last is U+2212, not "-"
)
floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e309", "-1e309", "1e-400", "0.0", ".5",
                     "5.", "1_000", "0x1F", "0o17", "1,000", "1,5", " 12 ", "\t3\n", "1e3", "12abc", "1.2.3"]),
)
junk = st.one_of(
    st.just(""),
    st.sampled_from(["\x00", "a\x00b", " ", "\t", "\n", "\r\n", "null", "None", "true", "[]", "{}", "'", '"',
                     "<script>", "../..", "%", "\\", "\ufeff", "\u202e", "\ufffd", "🙂", "ß", "İ", "ﬀ"]),
    st.text(max_size=40),
    st.sampled_from(LONG).map(lambda n: "x" * n),
)

hostile_value = st.one_of(ascii_digits, unicode_digits, signed, floats, junk)
