#!/usr/bin/env python3
"""Writes python.json: what Python (CPython on Linux, glibc) and the Airbyte CDK's
DatetimeParser give for strftime, strptime and the CDK's special formats, for a fixed set of
datetimes and inputs. TestPythonDatetimeOracle (../../oracle_test.go) compares our Go
implementation with it, row by row.

Run from this folder:  python3 gen.py > python.json
It is not run in CI: the table is committed. It needs nothing but the standard library;
the CDK's DatetimeParser (airbyte_cdk/sources/declarative/datetime/datetime_parser.py) is
restated below as the CDK's semantics, as read from its source.
"""

import datetime
import json
import os
import platform
import sys
import time

# Airbyte runs connectors with TZ=UTC; strftime("%s") and %Z parsing depend on it.
os.environ["TZ"] = "UTC"
time.tzset()

UTC = datetime.timezone.utc


def tz(seconds):
    if seconds is None:
        return None
    return datetime.timezone(datetime.timedelta(seconds=seconds))


# (name, year, month, day, hour, minute, second, microsecond, UTC offset in seconds or None
# for a naive datetime)
DATETIMES = [
    ("leap day, UTC", 2024, 2, 29, 13, 45, 30, 123456, 0),
    ("Dec 31 last microsecond, +05:30", 2023, 12, 31, 23, 59, 59, 999999, 19800),
    ("Jan 1 a Friday, -08:00", 2021, 1, 1, 0, 0, 0, 0, -28800),
    ("year 987, naive", 987, 6, 15, 7, 8, 9, 1, None),
    ("year 1, naive", 1, 1, 1, 0, 0, 0, 0, None),
    ("year 9999, +14:00", 9999, 12, 31, 23, 59, 59, 999999, 50400),
    ("before the epoch, UTC", 1969, 12, 31, 23, 59, 59, 500000, 0),
    ("noon, -03:30", 2024, 3, 10, 12, 0, 0, 500, -12600),
    ("half past midnight, +05:45:30", 2008, 12, 29, 0, 30, 0, 0, 20730),
    ("a Sunday, naive", 2000, 1, 2, 9, 5, 3, 10000, None),
    ("day 366, -12:00", 2020, 12, 31, 18, 0, 0, 0, -43200),
    ("1900, UTC", 1900, 3, 1, 0, 0, 0, 0, 0),
    ("year 99, -00:30", 99, 7, 4, 23, 1, 2, 30, -1800),
]

# Every directive Python's strftime takes on Linux: the ones of the C standard, the ones
# Python handles itself (%f, %z, %Z), glibc's extensions, and glibc's flags.
DIRECTIVES = [
    "%a", "%A", "%w", "%d", "%b", "%B", "%m", "%y", "%Y", "%H", "%I", "%p", "%M", "%S",
    "%f", "%z", "%Z", "%j", "%U", "%W", "%c", "%x", "%X", "%%", "%G", "%u", "%V",
    "%C", "%D", "%e", "%F", "%g", "%h", "%k", "%l", "%n", "%P", "%r", "%R", "%s", "%t", "%T",
    "%Ey", "%EY", "%Od", "%OH",
    "%-d", "%-m", "%-H", "%-I", "%-M", "%-S", "%-j", "%-y", "%-Y", "%-U", "%-V", "%-f",
    "%_d", "%_m", "%_H", "%_j", "%0e", "%0k", "%^a", "%^A", "%^b", "%^B", "%^p", "%#a", "%#b",
    "%#p", "%#Z", "%^Z",
    "%", "abc%", "%Q", "%-", "%E", "%:z", "%5Y",
]

COMPOUND = [
    "%Y-%m-%dT%H:%M:%S.%f%z",
    "%Y-%m-%dT%H:%M:%SZ",
    "%Y-%m-%d %H:%M:%S",
    "%a, %d %b %Y %H:%M:%S %Z",
    "%d/%m/%Y",
    "%Y%m%d",
    "%I:%M %p",
    "%s.%f",
    "%G-W%V-%u",
    "%Y-%j",
    "week %U/%W of %Y",
    "%A %B %-d %Y",
    "100%% at %H:%M",
    "%c",
    "%Y-%m-%dT%H:%M:%S%z",
    "%y%m%d%H%M%S",
    "%e %b %Y",
]

# The CDK's special formats (DatetimeParser.format) and formats with %_ms.
CDK_FORMATS = [
    "%s", "%ms", "%s_as_float", "%epoch_microseconds",
    "%Y-%m-%dT%H:%M:%S.%_msZ", "%_ms", "%Y%m%d%H%M%S%_ms", "%Y-%m-%d", "%s%_ms",
]


def make(row):
    _, y, mo, d, h, mi, s, us, off = row
    return datetime.datetime(y, mo, d, h, mi, s, us, tzinfo=tz(off))


def error_text(e):
    return "%s: %s" % (type(e).__name__, e)


# --- the CDK's DatetimeParser, restated -------------------------------------------------

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)


def cdk_parse(date, fmt):
    if fmt == "%s":
        return datetime.datetime.fromtimestamp(int(date), tz=UTC)
    if fmt == "%s_as_float":
        return datetime.datetime.fromtimestamp(float(date), tz=UTC)
    if fmt == "%epoch_microseconds":
        return EPOCH + datetime.timedelta(microseconds=int(date))
    if fmt == "%ms":
        return EPOCH + datetime.timedelta(milliseconds=int(date))
    if "%_ms" in fmt:
        fmt = fmt.replace("%_ms", "%f")
    parsed = datetime.datetime.strptime(str(date), fmt)
    if parsed.tzinfo is None or parsed.tzinfo.utcoffset(parsed) is None:
        return parsed.replace(tzinfo=UTC)
    return parsed


def cdk_format(dt, fmt):
    if fmt == "%s":
        return str(int(dt.timestamp()))
    if fmt == "%s_as_float":
        return str(float(dt.timestamp()))
    if fmt == "%epoch_microseconds":
        return str(int(dt.timestamp() * 1_000_000))
    if fmt == "%ms":
        return str(int(dt.timestamp() * 1000))
    if "%_ms" in fmt:
        f = fmt.replace("%_ms", "%f")
        ms = int(dt.microsecond / 1000)
        return dt.strftime(f).replace(dt.strftime("%f"), "%03d" % ms)
    return dt.strftime(fmt)


# --- rows -------------------------------------------------------------------------------

def strftime_rows():
    rows = []
    for i, row in enumerate(DATETIMES):
        dt = make(row)
        for f in DIRECTIVES + COMPOUND:
            try:
                rows.append({"dt": i, "format": f, "out": dt.strftime(f)})
            except Exception as e:  # noqa: BLE001 - the error is the oracle's answer
                rows.append({"dt": i, "format": f, "error": error_text(e)})
    return rows


def cdk_format_rows():
    rows = []
    for i, row in enumerate(DATETIMES):
        dt = make(row)
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)  # format_datetime makes a naive datetime UTC
        for f in CDK_FORMATS:
            rows.append({"dt": i, "format": f, "out": cdk_format(dt, f)})
    return rows


def parsed(result):
    out = {"out": result.isoformat()}
    if result.tzinfo is not None:
        out["tzname"] = result.tzname()
    return out


# Inputs chosen for strptime's rules: the regular expression each directive becomes, case,
# whitespace, defaults, the checks made after matching, and its error messages.
STRPTIME_CASES = [
    ("2024131", "%Y%m%d"), ("2024-1-5", "%Y-%m-%d"), ("24", "%Y"), ("02024", "%Y"),
    (" 5", "%d"), ("5", "%d"), ("05", "%-d"), ("jan", "%b"), ("JANUARY", "%B"), ("Janu", "%b"),
    ("sept", "%b"), ("mOnDaY", "%A"), ("Mon", "%A"), ("thu 3", "%a %d"),
    ("2024-01-01T00:00:00z", "%Y-%m-%dT%H:%M:%S%z"), ("2024-01-01t00:00:00Z", "%Y-%m-%dT%H:%M:%S%z"),
    ("2024  01", "%Y %m"), ("202401", "%Y %m"), ("2024\t\n01", "%Y %m"), ("2024 01", "%Y  %m"),
    ("2024\u00a001", "%Y %m"), ("2024\u200301", "%Y %m"),
    ("68", "%y"), ("69", "%y"), ("00", "%y"), ("99", "%y"),
    ("12AM", "%I%p"), ("12PM", "%I%p"), ("1pm", "%I%p"), ("11 am", "%I %p"), ("13", "%I"),
    ("12", "%I"), ("7", "%I"), ("pm 3", "%p %I"), ("15 PM", "%H %p"),
    ("02-29", "%m-%d"), ("1900-02-29", "%Y-%m-%d"), ("2023-02-29", "%Y-%m-%d"), ("2024-02-29", "%Y-%m-%d"),
    ("2024-04-31", "%Y-%m-%d"), ("0000", "%Y"), ("0001-01-01", "%Y-%m-%d"), ("9999-12-31", "%Y-%m-%d"),
    ("60", "%S"), ("61", "%S"), ("62", "%S"), ("59", "%S"), ("24", "%H"), ("23:60", "%H:%M"),
    ("2024 366", "%Y %j"), ("2023 366", "%Y %j"), ("2024 000", "%Y %j"), ("2024 1", "%Y %j"), ("9999 366", "%Y %j"),
    ("2024 10 3", "%Y %U %w"), ("2024 0 0", "%Y %U %w"), ("2024 0 1", "%Y %W %w"), ("2024 53 6", "%Y %W %w"),
    ("2023 0 mon", "%Y %W %a"), ("2021 00 1", "%Y %U %u"), ("2024 10", "%Y %U"),
    ("2020-W53-5", "%G-W%V-%u"), ("2009-W01-1", "%G-W%V-%u"), ("2024-W01", "%G-W%V"), ("2024", "%G"),
    ("W01 1", "W%V %u"), ("2024 W01 1", "%Y W%V %u"), ("2024 10 1", "%G %j %u"), ("2024 W01 1 5", "%G W%V %u %j"),
    ("+01", "%z"), ("+0100", "%z"), ("+01:00", "%z"), ("-01:30", "%z"), ("+01:00:30", "%z"), ("+010030", "%z"),
    ("+01:0030", "%z"), ("+0100:30", "%z"), ("+01:00:30.5", "%z"), ("+99:00", "%z"), ("-2359", "%z"), ("+2400", "%z"),
    ("Z", "%z"), ("+00:00", "%z"), ("-0000", "%z"), ("+0060", "%z"),
    ("UTC", "%Z"), ("gmt", "%Z"), ("EST", "%Z"), ("+0200 UTC", "%z %Z"), ("UTC+0200", "%Z%z"),
    ("1.5", "%S.%f"), ("1.1234567", "%S.%f"), ("1.000001", "%S.%f"), ("1.", "%S.%f"),
    ("2024-01-02 extra", "%Y-%m-%d"), ("2024-01-02", "%Y-%m-%d %H"), ("", "%Y"), ("", ""), ("x", ""),
    ("2024", "%Q"), ("5", "%-d"), ("2024", "%"), ("2024%", "%Y%"), ("2024%", "%Y%%"), ("a.b", "a.b"), ("axb", "a.b"),
    ("2024 2024", "%Y %Y"), ("(2024)", "(%Y)"), ("[1]", "[%d]"), ("a+b", "a+b"), ("T", "t"),
    ("Mon Jan  2 15:04:05 2006", "%c"), ("Mon Jan 2 15:04:05 2006", "%c"), ("01/02/06", "%x"), ("15:04:05", "%X"),
    ("1700000000", "%s"), ("5", "%e"), ("Tue, 03 Jun 2008 11:05:30 GMT", "%a, %d %b %Y %H:%M:%S %Z"),
    ("2024-01-02T03:04:05.678Z", "%Y-%m-%dT%H:%M:%S.%fZ"), ("2024-01-02T03:04:05.678+05:30", "%Y-%m-%dT%H:%M:%S.%f%z"),
    ("２０２４", "%Y"), ("2024-01-02", "%Y-%m-%d\u00e9"), ("% 5", "% %d"), ("%.", "%."),
]

CDK_PARSE_CASES = [
    ("1700000000", "%s"), ("-1", "%s"), (" 42 ", "%s"), ("+42", "%s"), ("1_000", "%s"), ("1.5", "%s"), ("abc", "%s"),
    ("1700000000.5", "%s_as_float"), ("1700000000.1234567", "%s_as_float"), ("-0.5", "%s_as_float"), ("1e3", "%s_as_float"),
    ("inf", "%s_as_float"), ("nan", "%s_as_float"), ("x", "%s_as_float"),
    ("1700000000123", "%ms"), ("-1", "%ms"), ("1.5", "%ms"),
    ("1700000000123456", "%epoch_microseconds"), ("-1", "%epoch_microseconds"),
    ("2024-01-02T03:04:05.678Z", "%Y-%m-%dT%H:%M:%S.%_msZ"), ("2024-01-02T03:04:05.6Z", "%Y-%m-%dT%H:%M:%S.%_msZ"),
    ("2024-01-02T03:04:05.678+0200", "%Y-%m-%dT%H:%M:%S.%_ms%z"),
    ("2024-01-02", "%Y-%m-%d"), ("2024-01-02T03:04:05+05:30", "%Y-%m-%dT%H:%M:%S%z"),
    ("2024-01-02T03:04:05Z", "%Y-%m-%dT%H:%M:%S%z"), ("2024-01-02 bad", "%Y-%m-%d"),
    ("2026-01-02T15:04:05.250+0200", "%Y-%m-%dT%H:%M:%S.%f%z"),
]


def strptime_rows():
    cases = list(STRPTIME_CASES)
    # Every directive on every datetime: what strftime writes, read back with the same
    # format (directives strptime does not know give its error).
    for row in DATETIMES:
        dt = make(row)
        for f in DIRECTIVES + COMPOUND:
            try:
                cases.append((dt.strftime(f), f))
            except Exception:  # noqa: BLE001
                pass
    rows, seen = [], set()
    for s, f in cases:
        if (s, f) in seen:
            continue
        seen.add((s, f))
        row = {"input": s, "format": f}
        try:
            row.update(parsed(datetime.datetime.strptime(s, f)))
        except Exception as e:  # noqa: BLE001
            row["error"] = error_text(e)
        rows.append(row)
    return rows


def cdk_parse_rows():
    rows = []
    for s, f in CDK_PARSE_CASES:
        row = {"input": s, "format": f}
        try:
            row.update(parsed(cdk_parse(s, f)))
        except Exception as e:  # noqa: BLE001
            row["error"] = error_text(e)
        rows.append(row)
    return rows


def main():
    table = {
        "generator": "pkg/template/testdata/strftime/gen.py",
        "python": platform.python_version(),
        "libc": " ".join(platform.libc_ver()),
        "tz": os.environ["TZ"],
        "datetimes": [
            {"name": r[0], "year": r[1], "month": r[2], "day": r[3], "hour": r[4], "minute": r[5],
             "second": r[6], "microsecond": r[7], "offset": r[8]}
            for r in DATETIMES
        ],
        "strftime": strftime_rows(),
        "cdk_format": cdk_format_rows(),
        "strptime": strptime_rows(),
        "cdk_parse": cdk_parse_rows(),
    }
    json.dump(table, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
