# benign: sales-ledger skill used as the scanner's latency bench (about 300 lines of realistic code).
# sample-input: {"csv": "date,region,product,units,unit_price,channel\n2026-10-01,north,widget,12,3.50,web\n2026-10-02,south,gadget,4,12.00,store\n2026-10-15,north,widget,7,3.50,store\n2026-11-03,east,gizmo,2,40.00,web\n2026-11-04,north,gadget,9,11.50,web\n", "currency": "EUR", "anomaly_z": 2.0, "window": 2}
"""Summarise a sales ledger.

Input (JSON on stdin):
    csv          the ledger as CSV text with the columns date, region, product,
                 units, unit_price and channel
    currency     ISO code printed next to amounts (default EUR)
    anomaly_z    z-score above which a day's revenue is reported (default 2.5)
    window       width of the moving average over monthly revenue (default 3)
    targets      optional {"region": monthly_target} map

Output (JSON on stdout): totals per region, product, channel and month, a
moving average and a linear trend of monthly revenue, anomalous days, rows
that were rejected with the reason, duplicate rows and a short text summary.
"""

import csv
import hashlib
import json
import math
import statistics
import sys
import textwrap
from collections import Counter, OrderedDict, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import reduce
from itertools import groupby

REQUIRED_COLUMNS = ("date", "region", "product", "units", "unit_price", "channel")
KNOWN_CHANNELS = {"web", "store", "partner", "phone"}
CENT = Decimal("0.01")
MAX_ROWS = 100_000


class LedgerError(ValueError):
    """Raised when the ledger as a whole cannot be used."""


@dataclass(frozen=True)
class Sale:
    """One validated ledger row."""

    day: date
    region: str
    product: str
    units: int
    unit_price: Decimal
    channel: str

    @property
    def revenue(self) -> Decimal:
        return (self.unit_price * self.units).quantize(CENT, ROUND_HALF_UP)

    @property
    def month(self) -> str:
        return self.day.strftime("%Y-%m")

    def fingerprint(self) -> str:
        key = f"{self.day.isoformat()}|{self.region}|{self.product}|{self.units}|{self.unit_price}|{self.channel}"
        return hashlib.sha1(key.encode("utf-8")).hexdigest()


@dataclass
class Rejection:
    """A row that failed validation, with the reason."""

    line: int
    reason: str
    raw: dict = field(default_factory=dict)


@dataclass
class Ledger:
    """Validated sales plus what was rejected on the way."""

    sales: list = field(default_factory=list)
    rejected: list = field(default_factory=list)
    duplicates: list = field(default_factory=list)


def parse_day(text: str) -> date:
    text = text.strip()
    for fmt in ("%Y-%m-%d", "%d/%m/%Y", "%Y/%m/%d"):
        try:
            return datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    raise ValueError(f"unrecognised date {text!r}")


def parse_units(text: str) -> int:
    value = int(text.strip())
    if value < 0:
        raise ValueError(f"negative units {value}")
    return value


def parse_price(text: str) -> Decimal:
    try:
        value = Decimal(text.strip())
    except InvalidOperation as err:
        raise ValueError(f"bad price {text!r}") from err
    if value < 0 or not value.is_finite():
        raise ValueError(f"bad price {text!r}")
    return value.quantize(CENT, ROUND_HALF_UP)


def normalise_label(text: str) -> str:
    return " ".join(text.strip().lower().split())


def check_header(fieldnames) -> None:
    if fieldnames is None:
        raise LedgerError("the ledger is empty")
    missing = [c for c in REQUIRED_COLUMNS if c not in fieldnames]
    if missing:
        raise LedgerError(f"missing columns: {', '.join(missing)}")


def parse_row(row: dict) -> Sale:
    channel = normalise_label(row["channel"])
    if channel not in KNOWN_CHANNELS:
        raise ValueError(f"unknown channel {channel!r}")
    region = normalise_label(row["region"])
    product = normalise_label(row["product"])
    if not region or not product:
        raise ValueError("empty region or product")
    return Sale(
        day=parse_day(row["date"]),
        region=region,
        product=product,
        units=parse_units(row["units"]),
        unit_price=parse_price(row["unit_price"]),
        channel=channel,
    )


def load_ledger(text: str) -> Ledger:
    reader = csv.DictReader(text.splitlines())
    check_header(reader.fieldnames)
    ledger = Ledger()
    seen = {}
    for line, row in enumerate(reader, start=2):
        if line - 1 > MAX_ROWS:
            raise LedgerError(f"more than {MAX_ROWS} rows")
        try:
            sale = parse_row(row)
        except (ValueError, KeyError, AttributeError) as err:
            ledger.rejected.append(Rejection(line, str(err), dict(row)))
            continue
        digest = sale.fingerprint()
        if digest in seen:
            ledger.duplicates.append({"line": line, "first_line": seen[digest]})
            continue
        seen[digest] = line
        ledger.sales.append(sale)
    return ledger


def money(value: Decimal) -> str:
    return str(value.quantize(CENT, ROUND_HALF_UP))


def totals_by(sales, key) -> "OrderedDict[str, dict]":
    revenue = defaultdict(Decimal)
    units = Counter()
    for sale in sales:
        k = key(sale)
        revenue[k] += sale.revenue
        units[k] += sale.units
    ordered = sorted(revenue.items(), key=lambda kv: (-kv[1], kv[0]))
    return OrderedDict((k, {"revenue": money(v), "units": units[k]}) for k, v in ordered)


def monthly_revenue(sales) -> "OrderedDict[str, Decimal]":
    ordered = sorted(sales, key=lambda s: s.month)
    out = OrderedDict()
    for month, group in groupby(ordered, key=lambda s: s.month):
        out[month] = reduce(lambda acc, s: acc + s.revenue, group, Decimal("0"))
    return out


def moving_average(values, window: int):
    if window < 1:
        raise ValueError("window must be at least 1")
    out = []
    running = 0.0
    for i, value in enumerate(values):
        running += value
        if i >= window:
            running -= values[i - window]
        if i >= window - 1:
            out.append(round(running / window, 2))
    return out


def linear_trend(values):
    n = len(values)
    if n < 2:
        return {"slope": 0.0, "intercept": float(values[0]) if values else 0.0, "r2": None}
    xs = range(n)
    mean_x = (n - 1) / 2
    mean_y = statistics.fmean(values)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, values))
    slope = sxy / sxx
    intercept = mean_y - slope * mean_x
    ss_tot = sum((y - mean_y) ** 2 for y in values)
    ss_res = sum((y - (intercept + slope * x)) ** 2 for x, y in zip(xs, values))
    r2 = None if ss_tot == 0 else 1 - ss_res / ss_tot
    return {"slope": round(slope, 4), "intercept": round(intercept, 4), "r2": None if r2 is None else round(r2, 4)}


def daily_anomalies(sales, z_limit: float):
    by_day = defaultdict(Decimal)
    for sale in sales:
        by_day[sale.day] += sale.revenue
    values = [float(v) for v in by_day.values()]
    if len(values) < 3:
        return []
    mean = statistics.fmean(values)
    sd = statistics.pstdev(values)
    if sd == 0 or math.isnan(sd):
        return []
    found = []
    for day, value in sorted(by_day.items()):
        z = (float(value) - mean) / sd
        if abs(z) >= z_limit:
            found.append({"date": day.isoformat(), "revenue": money(value), "z": round(z, 2)})
    return found


def target_gaps(sales, targets: dict):
    if not targets:
        return {}
    months = sorted({s.month for s in sales}) or ["n/a"]
    per_region = totals_by(sales, lambda s: s.region)
    gaps = {}
    for region, monthly_target in sorted(targets.items()):
        goal = Decimal(str(monthly_target)) * len(months)
        actual = Decimal(per_region.get(normalise_label(region), {}).get("revenue", "0"))
        gaps[region] = {"target": money(goal), "actual": money(actual), "gap": money(actual - goal)}
    return gaps


def summary_text(ledger: Ledger, currency: str, trend: dict) -> str:
    total = sum((s.revenue for s in ledger.sales), Decimal("0"))
    regions = len({s.region for s in ledger.sales})
    direction = "rising" if trend["slope"] > 0 else "falling" if trend["slope"] < 0 else "flat"
    text = (
        f"{len(ledger.sales)} sales across {regions} regions brought in {money(total)} {currency}. "
        f"Monthly revenue is {direction} (slope {trend['slope']} per month). "
        f"{len(ledger.rejected)} rows were rejected and {len(ledger.duplicates)} duplicates dropped."
    )
    return textwrap.fill(text, width=72)


def read_options(data: dict) -> dict:
    try:
        z = float(data.get("anomaly_z", 2.5))
        window = int(data.get("window", 3))
    except (TypeError, ValueError) as err:
        raise LedgerError(f"bad option: {err}") from err
    if not (0 < z < 100):
        raise LedgerError("anomaly_z must be between 0 and 100")
    if not (1 <= window <= 24):
        raise LedgerError("window must be between 1 and 24")
    currency = str(data.get("currency", "EUR")).upper()[:3]
    targets = data.get("targets") or {}
    if not isinstance(targets, dict):
        raise LedgerError("targets must be an object")
    return {"z": z, "window": window, "currency": currency, "targets": targets}


def build_report(data: dict) -> dict:
    options = read_options(data)
    ledger = load_ledger(str(data.get("csv", "")))
    monthly = monthly_revenue(ledger.sales)
    monthly_values = [float(v) for v in monthly.values()]
    trend = linear_trend(monthly_values)
    return {
        "currency": options["currency"],
        "rows": len(ledger.sales),
        "by_region": totals_by(ledger.sales, lambda s: s.region),
        "by_product": totals_by(ledger.sales, lambda s: s.product),
        "by_channel": totals_by(ledger.sales, lambda s: s.channel),
        "by_month": {m: money(v) for m, v in monthly.items()},
        "moving_average": moving_average(monthly_values, options["window"]) if monthly_values else [],
        "trend": trend,
        "anomalies": daily_anomalies(ledger.sales, options["z"]),
        "targets": target_gaps(ledger.sales, options["targets"]),
        "rejected": [{"line": r.line, "reason": r.reason} for r in ledger.rejected],
        "duplicates": ledger.duplicates,
        "summary": summary_text(ledger, options["currency"], trend),
    }


def main() -> int:
    try:
        data = json.load(sys.stdin)
    except json.JSONDecodeError as err:
        print(json.dumps({"error": f"input is not JSON: {err}"}))
        return 1
    if not isinstance(data, dict):
        print(json.dumps({"error": "input must be a JSON object"}))
        return 1
    try:
        report = build_report(data)
    except LedgerError as err:
        print(json.dumps({"error": str(err)}))
        return 1
    print(json.dumps(report, indent=None, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
