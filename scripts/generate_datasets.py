"""Generate the four fixed tasks: dirty.csv, gold.csv and task_metadata.json under datasets/.

Deterministic (seeded `random.Random`, no clock, no hash()). Each task starts from a clean
table, gets corrupted, and its gold is what the documented optimal plan produces when run by
the engine's own operations on the dirty table; the script then checks that this gold is the
clean table it started from (minus duplicates and outliers, plus the documented fills), so a
bug in an operation cannot quietly become the answer key.

    uv run python scripts/generate_datasets.py            # rewrite datasets/
    uv run python scripts/generate_datasets.py --check    # fail if datasets/ is stale
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dataclean_env.operations import OpContext, replay  # noqa: E402
from dataclean_env.operations.outliers import outlier_mask  # noqa: E402
from dataclean_env.table.values import cells_equal, kind_of  # noqa: E402
from dataclean_env.tasks.fixed import cast_to_schema, read_table  # noqa: E402

# Frozen on purpose, not imported from dataclean_env.generation.pools: the committed fixed
# tasks are exactly what these lists produce, while the generated families' pools may grow.
FIRST = [
    "Priya",
    "José",
    "Zoë",
    "Liam",
    "Amara",
    "Chen",
    "Fatima",
    "Noah",
    "Ingrid",
    "Mateo",
    "Aiko",
    "Olusegun",
    "Sofia",
    "Dmitri",
    "Léa",
    "Rahul",
    "Hannah",
    "Kwame",
    "Elif",
    "Tomás",
    "Mei",
    "Björn",
    "Ananya",
    "Gabriel",
    "Nadia",
    "Yusuf",
    "Camille",
    "Oscar",
    "Sara",
    "Hiroshi",
]
LAST = [
    "Sharma",
    "García",
    "Müller",
    "O'Brien",
    "Okafor",
    "Wang",
    "Haddad",
    "Smith",
    "Larsen",
    "Rossi",
    "Tanaka",
    "Adeyemi",
    "Novak",
    "Ivanova",
    "Dubois",
    "Patel",
    "Schmidt",
    "Mensah",
    "Yılmaz",
    "Fernández",
    "Lin",
    "Andersson",
    "Iyer",
    "Silva",
    "Kowalski",
    "Khan",
    "Moreau",
]
ALL_OPERATIONS = [
    "remove_duplicates",
    "rename_columns",
    "fill_missing",
    "fix_dtype",
    "remove_outliers",
    "validate_schema",
    "finish",
]


def names(rng: random.Random, count: int) -> list[str]:
    pool = [f"{f} {last}" for f in FIRST for last in LAST]
    return rng.sample(pool, count)


def dates(rng: random.Random, count: int, start: dt.date, end: dt.date) -> list[str]:
    span = (end - start).days
    return [(start + dt.timedelta(days=rng.randrange(span))).isoformat() for _ in range(count)]


def blank(
    rng: random.Random, table: pd.DataFrame, column: str, count: int, rows: list[int]
) -> None:
    """Empty `count` cells of `column`, chosen among `rows`."""
    table[column] = table[column].astype(object)
    for row in rng.sample(rows, count):
        table.loc[row, column] = None


def with_duplicates(
    rng: random.Random, table: pd.DataFrame, count: int, rows: list[int]
) -> pd.DataFrame:
    """Insert exact copies of `count` of `rows` at random places."""
    records = table.to_dict("records")
    for row in rng.sample(rows, count):
        records.insert(rng.randrange(len(records) + 1), dict(table.loc[row]))
    return pd.DataFrame(records, columns=table.columns, dtype=object)


# ── the four tasks ────────────────────────────────────────────────────────────


def easy(rng: random.Random) -> dict[str, Any]:
    n = 15
    clean = pd.DataFrame(
        {
            "emp_id": sorted(rng.sample(range(1001, 1100), n)),
            "emp_name": names(rng, n),
            "dept": [
                rng.choice(["Engineering", "Sales", "Marketing", "Finance", "HR"]) for _ in range(n)
            ],
            "salary": [rng.randrange(42_000, 126_000, 500) for _ in range(n)],
            "age": [rng.randint(22, 63) for _ in range(n)],
        }
    )
    dirty = with_duplicates(rng, clean, 5, list(range(n)))
    headers = {
        "emp_id": "EMP ID",
        "emp_name": "EMP NAME",
        "dept": "DEP T",
        "salary": "SAL ARY",
        "age": "AGE",
    }
    dirty = dirty.rename(columns=headers)
    return (
        {
            "task_id": "easy_dedup_rename",
            "difficulty": "easy",
            "folder": "easy",
            "description": (
                "Employee records (20 rows, 15 employees). Some rows are exact duplicates: remove "
                "them, keeping the first copy. The headers are garbled: rename them to the target "
                "schema emp_id, emp_name, dept, salary, age (plain snake_case gets 'DEP T' and "
                "'SAL ARY' wrong, so give rename_columns a mapping). Then finish."
            ),
            "max_steps": 10,
            "operations_allowed": [op for op in ALL_OPERATIONS if op != "remove_outliers"],
            "scoring": {"duplicate_score": 0.5, "schema_score": 0.5},
            "key_column": "emp_id",
            "header_map": {v: k for k, v in headers.items()},
            "text_columns": [],
            "solution": [
                {"operation": "remove_duplicates", "parameters": {}},
                {
                    "operation": "rename_columns",
                    "parameters": {"mapping": {v: k for k, v in headers.items()}},
                },
                {"operation": "finish", "parameters": {}},
            ],
        },
        clean,
        dirty,
    )


def medium(rng: random.Random) -> dict[str, Any]:
    n = 30
    clean = pd.DataFrame(
        {
            "customer_id": sorted(rng.sample(range(20_001, 29_999), n)),
            "age": [rng.randint(19, 74) for _ in range(n)],
            "salary": [rng.randrange(28_000, 152_000, 250) for _ in range(n)],
            "gender": rng.choices(["Female", "Male", "Non-binary"], weights=[46, 46, 8], k=n),
            "purchases": [rng.randint(0, 48) for _ in range(n)],
            "region": rng.choices(
                ["North", "South", "East", "West", "Central"], weights=[3, 2, 2, 2, 1], k=n
            ),
            "joined_date": dates(rng, n, dt.date(2018, 1, 1), dt.date(2025, 1, 1)),
        }
    )
    dirty = clean.copy()
    dirty["salary"] = [f"${v:,}" for v in clean["salary"]]
    rows = list(range(n))
    for column, count in (("age", 5), ("salary", 5), ("gender", 4), ("region", 4)):
        blank(rng, dirty, column, count, rows)
    return (
        {
            "task_id": "medium_missing_dtype",
            "difficulty": "medium",
            "folder": "medium",
            "description": (
                "Customer records (30 rows). Fill the missing numeric values (age, and salary, which "
                "is stored as text like '$48,250') with the column mean, and the missing categorical "
                "values (gender, region) with the column mode. Then fix the column types: target "
                "customer_id int, age int, salary int, gender str, purchases int, region str, "
                "joined_date datetime (fix_dtype auto reads currency text and ISO dates). Then finish."
            ),
            "max_steps": 15,
            "operations_allowed": ALL_OPERATIONS,
            "scoring": {"missing_score": 0.5, "dtype_score": 0.5},
            "key_column": "customer_id",
            "text_columns": [],
            "solution": [
                {"operation": "fill_missing", "parameters": {"strategy": "mean"}},
                {"operation": "fill_missing", "parameters": {"strategy": "mode"}},
                {"operation": "fix_dtype", "parameters": {"dtype": "auto"}},
                {"operation": "finish", "parameters": {}},
            ],
        },
        clean,
        dirty,
    )


PRODUCTS = {
    "Phone Charger": 19.5,
    "Wireless Mouse": 34.99,
    "Desk Lamp": 48.4,
    "USB-C Hub": 62.0,
    "Bluetooth Speaker": 79.0,
    "Webcam HD": 94.9,
    "Mechanical Keyboard": 109.5,
    "External SSD 1TB": 124.99,
    "Laptop Stand": 139.75,
    "Office Chair": 159.0,
    "Noise-Cancelling Headphones": 174.0,
    "Drawing Tablet": 189.0,
}


def hard(rng: random.Random) -> dict[str, Any]:
    good, outliers = 42, 3
    n = good + outliers
    products = [rng.choice(list(PRODUCTS)) for _ in range(n)]
    prices = [round(PRODUCTS[p] * rng.uniform(0.85, 1.15), 2) for p in products]
    outlier_rows = rng.sample(range(n), outliers)
    for row in outlier_rows:
        prices[row] = round(rng.uniform(24_999, 99_999), 2)
    clean = pd.DataFrame(
        {
            "order_id": sorted(rng.sample(range(70_001, 79_999), n)),
            "product": products,
            "quantity": [rng.randint(1, 12) for _ in range(n)],
            "price": prices,
            "customer_id": [rng.randint(3001, 3999) for _ in range(n)],
            "status": rng.choices(
                ["delivered", "shipped", "pending", "cancelled", "returned"],
                weights=[5, 3, 2, 1, 1],
                k=n,
            ),
            "order_date": dates(rng, n, dt.date(2024, 1, 1), dt.date(2025, 1, 1)),
            "rating": [rng.randint(1, 5) for _ in range(n)],
        }
    )
    good_rows = [r for r in range(n) if r not in outlier_rows]
    dirty = clean.copy()
    blank(rng, dirty, "quantity", 4, good_rows)
    blank(rng, dirty, "price", 4, good_rows)
    dirty = with_duplicates(rng, dirty, 5, good_rows)
    return (
        {
            "task_id": "hard_full_pipeline",
            "difficulty": "hard",
            "folder": "hard",
            "description": (
                "Order export (50 rows). Remove exact duplicate orders first. Fill the missing "
                "quantity and price with the column median (a few prices are extreme outliers, so a "
                "mean would be distorted); quantity is stored as text. Fix the types to the target "
                "order_id int, product str, quantity int, price float, customer_id int, status str, "
                "order_date datetime, rating int. Then remove the price outliers with the IQR rule "
                "on the price column, validate the schema and finish."
            ),
            "max_steps": 20,
            "operations_allowed": ALL_OPERATIONS,
            "scoring": {
                name: 0.2
                for name in (
                    "duplicate_score",
                    "missing_score",
                    "dtype_score",
                    "outlier_score",
                    "schema_score",
                )
            },
            "key_column": "order_id",
            "text_columns": ["quantity"],
            "solution": [
                {"operation": "remove_duplicates", "parameters": {}},
                {"operation": "fill_missing", "parameters": {"strategy": "median"}},
                {"operation": "fix_dtype", "parameters": {"dtype": "auto"}},
                {
                    "operation": "remove_outliers",
                    "parameters": {"method": "iqr", "column": "price"},
                },
                {"operation": "validate_schema", "parameters": {}},
                {"operation": "finish", "parameters": {}},
            ],
            "_outliers": outlier_rows,
        },
        clean,
        dirty,
    )


CATEGORIES = {
    "Electronics": (149, 950),
    "Furniture": (89, 780),
    "Office Supplies": (4, 60),
    "Software": (29, 640),
}


def expert(rng: random.Random) -> dict[str, Any]:
    good, outliers = 50, 3
    n = good + outliers
    categories = [rng.choice(list(CATEGORIES)) for _ in range(n)]
    prices = [round(rng.uniform(*CATEGORIES[c]), 2) for c in categories]
    outlier_rows = rng.sample(range(n), outliers)
    for row in outlier_rows:
        prices[row] = round(rng.uniform(48_000, 250_000), 2)
    clean = pd.DataFrame(
        {
            "transaction_id": sorted(rng.sample(range(900_001, 909_999), n)),
            "sale_date": dates(rng, n, dt.date(2023, 7, 1), dt.date(2024, 7, 1)),
            "customer_name": names(rng, n),
            "region": rng.choices(
                ["North America", "Europe", "APAC", "LATAM", "MEA"], weights=[4, 3, 2, 1, 1], k=n
            ),
            "product_category": categories,
            "units_sold": [rng.randint(1, 40) for _ in range(n)],
            "unit_price": prices,
            "sales_channel": rng.choices(["Online", "Retail", "Partner"], weights=[5, 3, 2], k=n),
        }
    )
    good_rows = [r for r in range(n) if r not in outlier_rows]
    dirty = clean.copy()
    dirty["unit_price"] = [f"${v:,.2f}" for v in clean["unit_price"]]
    blank(rng, dirty, "units_sold", 5, good_rows)
    blank(rng, dirty, "unit_price", 5, good_rows)
    blank(rng, dirty, "region", 4, good_rows)
    # Duplicates of rows with many units skew the mean: deduplicating first matters.
    heavy = sorted(good_rows, key=lambda r: -clean.loc[r, "units_sold"])[:15]
    dirty = with_duplicates(
        rng, dirty, 7, [r for r in heavy if pd.notna(dirty.loc[r, "units_sold"])]
    )
    headers = {
        "transaction_id": "Transaction ID",
        "sale_date": "Sale Date",
        "customer_name": "Customer Name",
        "region": "REGION",
        "product_category": "Product Category",
        "units_sold": "Units Sold",
        "unit_price": "Unit Price ($)",
        "sales_channel": "SalesChannel",
    }
    dirty = dirty.rename(columns=headers)
    return (
        {
            "task_id": "expert_sales_pipeline",
            "difficulty": "expert",
            "folder": "expert",
            "description": (
                "Sales transactions (60 rows) with messy headers; the order of the steps matters. "
                "Duplicates distort averages, so remove exact duplicates first. Convert the headers "
                "to snake_case. Fill units_sold with the column mean, unit_price (text like "
                "'$1,299.00', with a few extreme outliers) with the median, and region with the mode. "
                "Fix the types to the target transaction_id int, sale_date datetime, customer_name "
                "str, region str, product_category str, units_sold int, unit_price float, "
                "sales_channel str. Remove the unit_price outliers with the IQR rule, validate the "
                "schema and finish."
            ),
            "max_steps": 25,
            "operations_allowed": ALL_OPERATIONS,
            "scoring": {
                "duplicate_score": 0.15,
                "missing_score": 0.2,
                "dtype_score": 0.2,
                "outlier_score": 0.2,
                "schema_score": 0.25,
            },
            "key_column": "transaction_id",
            "header_map": {v: k for k, v in headers.items()},
            "text_columns": ["Units Sold"],
            "solution": [
                {"operation": "remove_duplicates", "parameters": {}},
                {"operation": "rename_columns", "parameters": {}},
                {
                    "operation": "fill_missing",
                    "parameters": {"strategy": "mean", "column": "units_sold"},
                },
                {
                    "operation": "fill_missing",
                    "parameters": {"strategy": "median", "column": "unit_price"},
                },
                {
                    "operation": "fill_missing",
                    "parameters": {"strategy": "mode", "column": "region"},
                },
                {"operation": "fix_dtype", "parameters": {"dtype": "auto"}},
                {
                    "operation": "remove_outliers",
                    "parameters": {"method": "iqr", "column": "unit_price"},
                },
                {"operation": "validate_schema", "parameters": {}},
                {"operation": "finish", "parameters": {}},
            ],
            "_outliers": outlier_rows,
        },
        clean,
        dirty,
    )


# ── building and checking ─────────────────────────────────────────────────────


def check_gold(
    entry: dict[str, Any], clean: pd.DataFrame, dirty: pd.DataFrame, gold: pd.DataFrame
) -> None:
    """The plan's output is the clean table minus outliers, with every filled cell filled."""
    key = entry["key_column"]
    expected = clean.drop(index=entry.get("_outliers", [])).reset_index(drop=True)
    assert sorted(gold[key]) == sorted(expected[key]), f"{entry['task_id']}: rows differ from clean"
    assert list(gold.columns) == list(clean.columns), f"{entry['task_id']}: columns differ"
    assert not gold.isna().any().any(), f"{entry['task_id']}: gold has missing cells"
    by_key = expected.set_index(key)
    dirty_by_key = (
        dirty.rename(columns=entry.get("header_map", {})).drop_duplicates().set_index(key)
    )
    for _, row in gold.iterrows():
        for column in gold.columns:
            if column == key or pd.isna(dirty_by_key.loc[row[key], column]):
                continue  # filled cells are the plan's documented choice
            kind = kind_of(gold[column].dtype)
            original = by_key.loc[row[key], column]
            assert cells_equal(row[column], original, kind if kind != "datetime" else "str") or (
                kind == "datetime" and str(row[column].date()) == original
            ), f"{entry['task_id']}: {column} of {row[key]} changed"


def check_outliers(entry: dict[str, Any], clean: pd.DataFrame, table: pd.DataFrame) -> None:
    """IQR on the filled, typed table flags exactly the planted outliers."""
    planted = sorted(clean.loc[entry["_outliers"], entry["key_column"]])
    step = next(a for a in entry["solution"] if a["operation"] == "remove_outliers")
    column = step["parameters"]["column"]
    upto = entry["solution"].index(step)
    before = replay(table, entry["solution"][:upto])
    mask = outlier_mask(before[column].to_numpy(dtype=float), "iqr", 1.5)
    flagged = sorted(before[mask][entry["key_column"]])
    assert flagged == planted, f"{entry['task_id']}: IQR flags {flagged}, planted {planted}"


def build(out: Path) -> None:
    rng = random.Random(20_260_401)
    metadata = []
    for make in (easy, medium, hard, expert):
        entry, clean, dirty = make(rng)
        folder = out / entry["folder"]
        folder.mkdir(parents=True, exist_ok=True)
        dirty.to_csv(folder / "dirty.csv", index=False)
        loaded = read_table(folder / "dirty.csv", entry["text_columns"])
        gold = replay(loaded, entry["solution"])
        schema = {c: kind_of(gold[c].dtype) for c in gold.columns}
        context = OpContext(target_schema=schema)
        assert replay(loaded, entry["solution"], context).equals(gold)
        if "_outliers" in entry:
            check_outliers(entry, clean, loaded)
        check_gold(entry, clean, loaded, gold)
        gold.to_csv(folder / "gold.csv", index=False, date_format="%Y-%m-%d")
        reread = cast_to_schema(read_table(folder / "gold.csv"), schema)
        assert reread.equals(gold) or all(
            cells_equal(a, b, schema[c])
            for c in gold.columns
            for a, b in zip(reread[c], gold[c], strict=True)
        ), f"{entry['task_id']}: gold does not survive a CSV round trip"
        entry.pop("_outliers", None)
        entry["target_schema"] = schema
        metadata.append(entry)
    with open(out / "task_metadata.json", "w", encoding="utf-8") as handle:
        json.dump({"tasks": metadata}, handle, indent=2, ensure_ascii=False)
        handle.write("\n")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "datasets")
    parser.add_argument(
        "--check", action="store_true", help="fail if --out differs from a fresh build"
    )
    args = parser.parse_args()
    if not args.check:
        build(args.out)
        print(f"wrote {args.out}")
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        build(Path(scratch))
        stale = [
            str(p.relative_to(scratch))
            for p in sorted(Path(scratch).rglob("*"))
            if p.is_file()
            and (
                not (args.out / p.relative_to(scratch)).exists()
                or (args.out / p.relative_to(scratch)).read_bytes() != p.read_bytes()
            )
        ]
    if stale:
        print("stale: " + ", ".join(stale))
        return 1
    print("datasets are up to date")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
