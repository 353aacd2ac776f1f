"""``metav1.MicroTime`` as the Lease and the Events write it."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from topospread.client.leaderelection import micro_time


def _formatted(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@given(st.floats(min_value=0, max_value=4e9, allow_nan=False, allow_infinity=False))
def test_micro_time_writes_what_datetime_writes(at):
    assert micro_time(at) == _formatted(at)


def test_a_fraction_that_rounds_up_carries_into_the_second():
    for at in (0.9999999, 1.9999995, 1_700_000_000.9999996, 59.9999999):
        assert micro_time(at) == _formatted(at)
    assert micro_time(59.9999999) == "1970-01-01T00:01:00.000000Z"


def test_now_is_rfc3339_with_microseconds_in_utc():
    text = micro_time()
    parsed = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert abs(parsed.timestamp() - datetime.now(UTC).timestamp()) < 5
