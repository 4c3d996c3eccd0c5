"""What a JSON or CSV file source refuses when it is built: reader options a line-by-line parse with
dead letters cannot honour."""

from __future__ import annotations

import pytest

import funke as fk
from funke.errors import UnsupportedError


@pytest.mark.parametrize(
    "options, says",
    [
        ({"multiLine": True}, "multiLine=true (funke reads one record per line"),
        ({"mode": "DROPMALFORMED"}, "mode / columnNameOfCorruptRecord (bad records always go to the job's dead letters)"),
        ({"columnNameOfCorruptRecord": "bad"}, "mode / columnNameOfCorruptRecord"),
        ({"encoding": "UTF-16"}, "encoding=UTF-16 (funke reads json files as UTF-8)"),
    ],
)
def test_options_that_would_lose_or_hide_bad_records_are_refused(options, says):
    with pytest.raises(UnsupportedError, match="cannot take") as e:
        fk.sources.files("in/", schema="k string", format="json", **options)
    assert says in str(e.value)


def test_options_it_honours_are_taken():
    src = fk.sources.files("in/", schema="k string", format="csv", header=True, sep=";", maxFilesPerTrigger=1, encoding="utf-8")
    assert dict(src.options) == {"header": "True", "sep": ";", "maxFilesPerTrigger": "1", "encoding": "utf-8"}
