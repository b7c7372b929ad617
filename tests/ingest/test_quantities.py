"""Deterministic amounts: parse_quantities, detect_scale and table_extraction (exact Decimal values)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from stratagraph.ingest.quantities import detect_scale, is_total_label, parse_quantities, table_extraction
from stratagraph.schema import Table

BUDGET = Path(__file__).resolve().parents[2] / "examples" / "budget" / "riverton_city_budget_fy2025.md"


def one(text: str, **kwargs: object):
    found = parse_quantities(text, **kwargs)  # type: ignore[arg-type]
    assert len(found) == 1, found
    return found[0]


# --------------------------------------------------------------------------------------------------
# parse_quantities
# --------------------------------------------------------------------------------------------------


def test_money_with_scale_word() -> None:
    q = one("The Police Department requests $1.2 million for FY2025.")
    assert q.value == Decimal("1200000")
    assert q.scale == 10**6 and q.currency == "USD" and q.unit == "USD"
    assert q.raw == "$1.2 million"
    assert format(q.value, "f") == "1200000"  # no trailing ".0"
    assert q.model_dump(mode="json")["value"] == "1200000"


@pytest.mark.parametrize(
    ("text", "value", "scale", "currency", "raw"),
    [
        ("€3.4bn", "3400000000", 10**9, "EUR", "€3.4bn"),
        ("USD 5 million", "5000000", 10**6, "USD", "USD 5 million"),
        ("5 million USD", "5000000", 10**6, "USD", "5 million USD"),
        ("US$2.5m", "2500000", 10**6, "USD", "US$2.5m"),
        ("£12k", "12000", 10**3, "GBP", "£12k"),
        ("¥300", "300", 1, "JPY", "¥300"),
        ("EUR 7.25 bn", "7250000000", 10**9, "EUR", "EUR 7.25 bn"),
        ("an award of 40 thousand dollars", "40000", 10**3, "USD", "40 thousand dollars"),
        ("$2.5 trillion", "2500000000000", 10**12, "USD", "$2.5 trillion"),
        ("$1,320.50", "1320.5", 1, "USD", "$1,320.50"),
    ],
)
def test_currencies_and_scales(text: str, value: str, scale: int, currency: str, raw: str) -> None:
    q = one(text)
    assert (q.value, q.scale, q.currency, q.unit, q.raw) == (Decimal(value), scale, currency, currency, raw)


def test_parenthesised_negative_with_scale_word() -> None:
    q = one("which in turn allows a reduction of (150) thousand in overtime.")
    assert q.value == Decimal("-150000") and q.scale == 1000 and q.raw == "(150) thousand"
    assert q.currency is None
    q = one("a reduction of (150) thousand", default_currency="USD")
    assert q.currency == "USD" and q.value == Decimal("-150000")


def test_parentheticals_are_not_negative() -> None:
    found = parse_quantities("at $70 thousand each ($140 thousand), grow by $170 thousand (14.8%)")
    assert [q.value for q in found] == [Decimal(70000), Decimal(140000), Decimal(170000), Decimal("14.8")]
    assert [q.raw for q in found] == ["$70 thousand", "$140 thousand", "$170 thousand", "14.8%"]


@pytest.mark.parametrize(
    ("text", "value", "raw"),
    [
        ("(150)", "-150", "(150)"),
        ("($150)", "-150", "($150)"),
        ("$(150)", "-150", "$(150)"),
        ("-$5 million", "-5000000", "-$5 million"),
        ("\u22124.5", "-4.5", "\u22124.5"),
        ("an operating margin of negative 3.2%", "-3.2", "negative 3.2%"),
    ],
)
def test_negatives(text: str, value: str, raw: str) -> None:
    q = one(text)
    assert q.value == Decimal(value) and q.raw == raw


@pytest.mark.parametrize(
    ("text", "raw"),
    [("12.5%", "12.5%"), ("12.5 percent", "12.5 percent"), ("12.5 per cent", "12.5 per cent"), ("12.5 %", "12.5 %")],
)
def test_percentages(text: str, raw: str) -> None:
    q = one(text, default_scale=1000, default_currency="USD")  # defaults never apply to percentages
    assert q.value == Decimal("12.5") and q.unit == "%" and q.scale == 1 and q.currency is None and q.raw == raw


def test_negative_percent_and_points() -> None:
    q = one("-2.5%")
    assert q.value == Decimal("-2.5") and q.unit == "%"
    q = one("up 150 basis points from last year")
    assert q.value == Decimal(150) and q.unit == "bp"
    q = one("up 1.5 percentage points")
    assert q.value == Decimal("1.5") and q.unit == "pp"


def test_ranges_share_scale_and_unit() -> None:
    low, high = parse_quantities("a guidance range of $136\u2013141 million")
    assert (low.value, low.currency, low.scale) == (Decimal(136000000), "USD", 10**6)
    assert (high.value, high.currency, high.scale) == (Decimal(141000000), "USD", 10**6)
    low, high = parse_quantities("hardware margin of 33 to 35%")
    assert (low.value, low.unit, high.value, high.unit) == (Decimal(33), "%", Decimal(35), "%")


def test_counted_nouns() -> None:
    q = one("We ended the quarter with 1,200 employees, and more.")
    assert q.value == Decimal(1200) and q.unit == "employees" and q.currency is None and q.scale == 1
    q = one("mainly for 38 replacement body-worn cameras and the annual license")
    assert q.unit == "cameras"
    found = parse_quantities("manages 34 parks covering 612 acres, 19 miles of trail")
    assert [(q.value, q.unit) for q in found] == [
        (Decimal(34), "parks"),
        (Decimal(612), "acres"),
        (Decimal(19), "miles"),
    ]
    q = one("a workforce of 1.2 million employees")
    assert (q.value, q.unit, q.scale, q.currency) == (Decimal(1200000), "employees", 10**6, None)
    q = one("compared with 1,150 last quarter")
    assert q.unit is None
    # a counted noun keeps defaults away: 38 cameras are not 38 thousand dollars
    q = one("38 cameras", default_scale=1000, default_currency="USD")
    assert q.value == Decimal(38) and q.unit == "cameras" and q.currency is None


def test_vote_gives_both_numbers() -> None:
    found = parse_quantities("The City Council adopted the budget on June 11, 2024 by a vote of 6 to 1.")
    assert [q.value for q in found] == [Decimal(6), Decimal(1)]
    assert all(q.unit is None for q in found)


@pytest.mark.parametrize(
    "text",
    [
        "in 2024",
        "FY2025 Adopted",
        "the 2024 budget",
        "revenue in Q3 grew",
        "see Section 2.1 and Section 1.1.2",
        "described in § 4 and Chapter 3, Table 2 and Figure 7",
        "adopted on June 11, 2024",
        "Teutberga( died 11 November 875) was a queen",
        "the 3rd quarter and the 1990s",
        "The renovation of Fire Station 3 is a capital project; Engine 3 will operate",
        "the K-9 unit and COVID-19",
        "the 2020-21 season",
        "dated 2024-08-06 at 10:30",
        "from FY2026-FY2029",
        "the regional P25 network",
        "1. Replace two patrol vehicles\n2. Add three hybrid patrol vehicles",
        "moved to Apartment 5B after filing Form 10K",
        "Lambert( died after 938) was the second son",
        "In 931, before 17 October, Hugh disowned Lambert",
        "Emperor Lothair I of the Franks (795\u2013855)",
        "founded c. 1200 and sacked in 410 AD",
    ],
)
def test_not_quantities(text: str) -> None:
    assert parse_quantities(text) == []


def test_old_years_need_context() -> None:
    assert [(q.value, q.unit) for q in parse_quantities("in 120 cases")] == [(Decimal(120), "cases")]
    assert [q.value for q in parse_quantities("rose from 120 to 150")] == [Decimal(120), Decimal(150)]
    assert [q.value for q in parse_quantities("between 995 and 997")] == [Decimal(995), Decimal(997)]


def test_identifier_rule_gives_way_to_money() -> None:
    q = one("Revenue $5 million")
    assert q.value == Decimal(5000000)
    q = one("About 1,200 employees")  # a capitalised function word is not an identifier
    assert q.value == Decimal(1200)


def test_defaults_apply_to_bare_numbers() -> None:
    q = one("1,320", default_scale=1000, default_currency="USD")
    assert q.value == Decimal(1320000) and q.scale == 1000 and q.currency == "USD" and q.unit == "USD"
    q = one("(150)", default_scale=1000, default_currency="USD")
    assert q.value == Decimal(-150000)
    q = one("$1,320", default_scale=1000)  # explicit currency, no scale: the table's scale applies
    assert q.value == Decimal(1320000) and q.currency == "USD"
    q = one("$1.2 million", default_scale=1000)  # an explicit scale wins
    assert q.value == Decimal(1200000) and q.scale == 10**6


def test_is_total() -> None:
    found = parse_quantities(
        "Operating appropriations total $53.9 million in FY2025, an increase of $1.85 million, or 3.6%."
    )
    assert [q.is_total for q in found] == [True, False, False]
    found = parse_quantities("The combined budget is $34.4 million, up $1.12 million from FY2024.")
    assert [q.is_total for q in found] == [True, False]
    assert one("$5 million in total").is_total
    assert not one("Hardware revenue was $98.4 million").is_total
    assert one("1,320", label="Total | FY2025 Adopted").is_total
    assert not one("1,320", label="Personnel | FY2025 Adopted").is_total


def test_section_id_and_label_are_carried() -> None:
    found = parse_quantities("$5 million and 12%", section_id="doc#1.1", label="Police | Change")
    assert len(found) == 2
    assert all(q.section_id == "doc#1.1" and q.label == "Police | Change" for q in found)


def test_raw_is_exact_substring() -> None:
    text = "Equipment increases 10.9% to $710 thousand, while overtime falls by (230) thousand."
    for q in parse_quantities(text):
        assert q.raw in text
    assert [q.raw for q in parse_quantities(text)] == ["10.9%", "$710 thousand", "(230) thousand"]


def test_total_label_helper() -> None:
    assert is_total_label("Total") and is_total_label("Grand total") and is_total_label("Subtotal")
    assert is_total_label("Five-year total") and is_total_label("Total revenue")
    assert not is_total_label("Totally new") and not is_total_label("Personnel") and not is_total_label(None)


# --------------------------------------------------------------------------------------------------
# detect_scale
# --------------------------------------------------------------------------------------------------


def test_detect_scale_budget_preamble() -> None:
    text = BUDGET.read_text(encoding="utf-8")
    preamble = next(p for p in text.split("\n\n") if "Unless stated otherwise" in p)
    sentence = next(s for s in preamble.split(". ") if "thousands" in s)
    assert detect_scale(sentence) == (1000, "USD")
    assert detect_scale(preamble) == (1000, "USD")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("all tables are in thousands of dollars", (1000, "USD")),
        ("Operating expenses (in thousands)", (1000, None)),
        ("Revenue by segment ($000s)", (1000, "USD")),
        ("All figures in millions of USD", (10**6, "USD")),
        ("$ thousands", (1000, "USD")),
        ("Segment results (USD millions)", (10**6, "USD")),
        ("Net sales, €m", (10**6, "EUR")),
        ("Dollars in thousands", (1000, "USD")),
        ("Amounts in EUR million", (10**6, "EUR")),
        ("Headcount (000s)", (1000, None)),
        ("(in billions of U.S. dollars)", (10**9, "USD")),
    ],
)
def test_detect_scale_forms(text: str, expected: tuple[int, str | None]) -> None:
    assert detect_scale(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", "Revenue was $1.2 million in 2024.", "in thousands of homes across the state", "FY2025 Adopted", "Change"],
)
def test_detect_scale_none(text: str) -> None:
    assert detect_scale(text) is None


# --------------------------------------------------------------------------------------------------
# table_extraction
# --------------------------------------------------------------------------------------------------

POLICE = Table(
    header=["Line item", "FY2024 Actual", "FY2025 Adopted", "Change"],
    rows=[
        ["Personnel", "14,860", "15,420", "560"],
        ["Overtime", "1,320", "1,170", "(150)"],
        ["Notes", "see text", "", ""],
        ["Total", "18,015", "18,585", "570"],
    ],
)
PREAMBLE = "Unless stated otherwise, all tables are in thousands of dollars."


def test_table_rows_become_facts() -> None:
    ex = table_extraction("doc#1.1.1#1", POLICE, section_id="doc#1.1.1", context=PREAMBLE)
    assert ex.chunk_id == "doc#1.1.1#1"
    assert [f.description for f in ex.facts] == [POLICE.row_text(r) for r in POLICE.rows]
    assert all(f.type == "table_row" and f.confidence == 1.0 for f in ex.facts)
    personnel, overtime, notes, total = ex.facts
    assert personnel.entities == ["Personnel"]
    assert [q.value for q in personnel.quantities] == [Decimal(14860000), Decimal(15420000), Decimal(560000)]
    assert [q.label for q in personnel.quantities] == [
        "Personnel | FY2024 Actual",
        "Personnel | FY2025 Adopted",
        "Personnel | Change",
    ]
    assert all(q.scale == 1000 and q.currency == "USD" and q.section_id == "doc#1.1.1" for q in personnel.quantities)
    assert overtime.quantities[0].value == Decimal(1320000)
    assert overtime.quantities[-1].value == Decimal(-150000)
    assert notes.quantities == [] and notes.entities == ["Notes"]
    assert total.attributes.get("total") == "true"
    assert all(q.is_total for q in total.quantities)
    assert not any(q.is_total for q in personnel.quantities)
    names = [(e.name, e.type, e.line_item) for e in ex.entities]
    assert names == [
        ("Personnel", "LINE_ITEM", True),
        ("Overtime", "LINE_ITEM", True),
        ("Notes", "LINE_ITEM", True),
        ("Total", "LINE_ITEM", True),
    ]
    assert ex.relations == []


def test_header_cells_never_parsed_and_defaults_apply() -> None:
    ex = table_extraction("c", POLICE, section_id="s", default_scale=1000, default_currency="USD")
    assert ex.facts[0].quantities[1].value == Decimal(15420000)
    for fact in ex.facts:
        for q in fact.quantities:
            assert "2025" not in q.raw and "2024" not in q.raw
    # without any scale the cells are taken as written
    ex = table_extraction("c", POLICE, section_id="s")
    assert ex.facts[0].quantities[0].value == Decimal(14860) and ex.facts[0].quantities[0].currency is None


def test_caption_scale_wins_over_context_and_header_over_caption() -> None:
    table = Table(
        header=["Segment", "Revenue", "Headcount (000s)", "Margin"],
        rows=[["Hardware", "98.4", "1.2", "33.5%"], ["Grand total", "142.6", "1.8", "41.3%"]],
        caption="Results by segment (USD millions)",
    )
    ex = table_extraction("c", table, section_id="s", context=PREAMBLE, default_scale=10)
    hw, total = ex.facts
    assert hw.quantities[0].value == Decimal(98400000) and hw.quantities[0].currency == "USD"
    assert hw.quantities[1].value == Decimal(1200) and hw.quantities[1].currency is None
    assert hw.quantities[2].value == Decimal("33.5") and hw.quantities[2].unit == "%"
    assert hw.attributes == {"caption": "Results by segment (USD millions)"}
    assert all(q.is_total for q in total.quantities)
    assert ex.entities[1].description == "total row"


def test_five_year_total_column_and_numeric_label_rows() -> None:
    table = Table(
        header=["Project", "FY2025 Adopted", "Five-year total"],
        rows=[["Radio system upgrade", "530", "530"], ["", "", ""], ["Only label", "", ""], ["2024", "7", "8"]],
    )
    ex = table_extraction("c", table, section_id="s", context=PREAMBLE)
    assert len(ex.facts) == 2  # the empty row and the lone label give nothing
    radio, year_row = ex.facts
    assert [q.is_total for q in radio.quantities] == [False, True]
    assert year_row.entities == ["2024"]  # a year cell is a label, not an amount
    assert [q.value for q in year_row.quantities] == [Decimal(7000), Decimal(8000)]


def test_row_without_numbers_but_two_cells() -> None:
    table = Table(header=["Department", "Head"], rows=[["Police", "Chief Dana Ruiz"], ["Fire", "—"]])
    ex = table_extraction("c", table, section_id="s")
    assert len(ex.facts) == 1
    assert ex.facts[0].entities == ["Police"] and ex.facts[0].quantities == []
    assert ex.facts[0].description == "Police; Head: Chief Dana Ruiz"
