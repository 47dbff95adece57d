"""The timestamp shortcuts write exactly what the reference formula writes, for every input form."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from evidencekit.server.evidence.store.timestamps import contract_time

offsets = st.integers(min_value=-23 * 60, max_value=23 * 60).map(lambda minutes: timezone(timedelta(minutes=minutes)))
moments = st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(9999, 12, 30),
                       timezones=st.one_of(st.just(UTC), offsets))
moments = moments | moments.map(lambda moment: moment.replace(microsecond=0))  # no fraction at all


def reference(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


@given(moments)
def test_a_datetime_is_written_as_the_reference_writes_it(moment: datetime) -> None:
    assert contract_time(moment) == reference(moment)


@given(moments)
def test_sqlite_text_is_written_as_the_reference_writes_the_datetime_it_holds(moment: datetime) -> None:
    for stored in (moment.isoformat(" "), moment.astimezone(UTC).isoformat(" "), moment.isoformat()):
        assert contract_time(stored) == reference(moment)


def test_what_the_store_writes_takes_the_shortcut() -> None:
    assert contract_time("2026-12-01 08:45:04.068690+00:00") == "2026-12-01T08:45:04.068690Z"
    assert contract_time("2026-12-01 08:45:04+00:00") == "2026-12-01T08:45:04Z"
    assert contract_time("2026-12-01 10:45:04+02:00") == "2026-12-01T08:45:04Z"
