"""Tables (reading/tables.py, through reading.read) on tables written here, stored as ingestion stores them."""

from __future__ import annotations

from decimal import Decimal

from stratagraph.reading import read
from tests.reading.conftest import passage, row_fact

_HEADER = "Line item | FY2026 Actual | FY2027 Budget | Change"


def _table(section: str, rows: dict[str, tuple[str, str, str]], n: int) -> tuple:
    lines = [_HEADER] + [f"{label}; FY2026 Actual: {a}; FY2027 Budget: {b}; Change: {c}" for label, (a, b, c) in rows.items()]
    ev = passage("\n".join(lines), title="Town of Brin Budget", path=["2. Public Works", section], n=n)
    facts = [row_fact(label, {"FY2026 Actual": (a, 1000), "FY2027 Budget": (b, 1000), "Change": (c, 1000)})
             for label, (a, b, c) in rows.items()]  # fmt: skip
    return ev, facts


def _budget() -> tuple[list, dict]:
    depot, depot_facts = _table("2.1 Central Depot", {"Personnel": ("1,200", "1,260", "60"), "Fuel": ("300", "410", "110"),
                                                      "Road salt": ("90", "85", "(5)"), "Total": ("1,590", "1,755", "165")}, 0)  # fmt: skip
    yard, yard_facts = _table("2.2 North Yard", {"Personnel": ("800", "830", "30"), "Fuel": ("150", "160", "10"),
                                                 "Total": ("950", "990", "40")}, 1)  # fmt: skip
    return [depot, yard], {depot.chunk_id: depot_facts, yard.chunk_id: yard_facts}


def test_a_cell_by_row_section_and_period() -> None:
    ev, facts = _budget()
    got = read("How much is budgeted for fuel at the North Yard in fiscal 2027?", ev, facts)
    assert got.answer == "$160 thousand" and got.computed is not None and got.computed.result == Decimal(160000)
    assert got.citations[0].quote.startswith("Fuel; FY2026 Actual: 150")
    assert read("What did the central depot spend on personnel in FY2026?", ev, facts).answer == "$1,200 thousand"


def test_a_difference_between_two_sections() -> None:
    ev, facts = _budget()
    got = read("How much more is budgeted for personnel at the Central Depot than at the North Yard in FY2027?", ev, facts)
    assert got.kind == "computed" and got.answer == "$430 thousand"
    assert [o.raw for o in got.computed.operands] == ["1,260", "830"]


def test_a_set_summed_over_sections() -> None:
    ev, facts = _budget()
    got = read("Adding up every fuel line, what is budgeted for fuel in FY2027?", ev, facts)
    assert got.kind == "computed" and got.answer == "$570 thousand"


def test_the_row_that_grew_most() -> None:
    ev, facts = _budget()
    got = read("At the Central Depot, which line item grows the most from FY2026 to FY2027?", ev, facts)
    assert got.answer.startswith("Fuel")


def test_no_cell_for_a_line_the_tables_lack() -> None:
    ev, facts = _budget()
    assert not read("How much is budgeted for electricity at the North Yard in FY2027?", ev, facts).found


def test_a_change_of_one_line_reads_both_periods_from_its_row() -> None:
    from stratagraph.reading import read
    from tests.reading.conftest import passage, row_fact

    prose = passage("Fuel falls by $40 thousand. The depot was staffed by 12 mechanics in FY2024.", title="Orrin Ferries",
                    path=["Depot"], n=0)  # fmt: skip
    table = passage("Fuel; FY2024 Actual: 610; FY2025 Adopted: 570", title="Orrin Ferries", path=["Depot"], n=1)
    facts = {table.chunk_id: [row_fact("Fuel", {"FY2024 Actual": ("610", 1000), "FY2025 Adopted": ("570", 1000)})]}
    got = read("What is the percent change in the depot's fuel from FY2024 to FY2025?", [prose, table], facts)
    assert got.computed is not None and [o.raw for o in got.computed.operands] == ["610", "570"]


def test_a_row_of_a_unit_named_in_other_words_beside_a_prose_sentence_about_the_line() -> None:
    """A row's own section heading says which unit it is of, fully: the question's "north yard unit" picks the
    North Yard's fuel row, not a sentence elsewhere that talks about fuel."""
    ev, facts = _budget()
    prose = passage("Fuel prices rose across every yard in the spring, the memo says.", title="Town of Brin Budget",
                    path=["2. Public Works"], n=2)  # fmt: skip
    got = read("How much is set aside for fuel in the north yard unit in FY2027?", [prose, *ev], facts)
    assert got.answer == "$160 thousand"


def test_a_caption_says_what_its_rows_are() -> None:
    """A table chunk's caption line ("Table 3: Riders by route") is part of each row's identity, like its heading."""
    text = "Table 3: Riders by route, in thousands.\nRoute | 2025 | 2026\nHarbour Loop; 2025: 410; 2026: 455\nHill Line; 2025: 120; 2026: 98"
    ev = passage(text, title="Brin Transit Annual Report", path=["4. Service"], n=0)
    from stratagraph.reading.sentences import sentences

    rows = [s for s in sentences([ev]) if s.is_row]
    assert [r.caption for r in rows] == ["Table 3: Riders by route, in thousands."] * 2
    assert {"rider", "rout"} <= rows[0].heading


def test_no_cell_for_a_period_no_column_holds() -> None:
    ev, facts = _budget()
    assert read("How much is budgeted for fuel at the North Yard in fiscal 2029?", ev, facts).kind == "not_found"
    assert read("How much is budgeted for fuel at the North Yard in fiscal 2027?", ev, facts).answer == "$160 thousand"


def _units() -> tuple[list, dict]:
    """Two units whose names share a word with their parent's heading ("Field Services", "Services")."""
    rows_a = {"Personnel": ("500", "520", "20"), "Vehicles": ("70", "95", "25"), "Total": ("570", "615", "45")}
    rows_b = {"Personnel": ("640", "700", "60"), "Vehicles": ("40", "44", "4"), "Total": ("680", "744", "64")}
    a, fa = _table("3.1 Field Services", rows_a, 2)
    b, fb = _table("3.2 Records Management", rows_b, 3)
    a = a.model_copy(update={"section_path": ["3. Support Services", "3.1 Field Services"]})
    b = b.model_copy(update={"section_path": ["3. Support Services", "3.2 Records Management"]})
    return [a, b], {a.chunk_id: fa, b.chunk_id: fb}


def test_operands_told_apart_by_a_name_are_read_from_their_own_tables() -> None:
    ev, facts = _units()
    got = read("How much more does the Town of Brin budget for vehicles in FY2027 under Field Services than under "
               "Records Management?", ev, facts)  # fmt: skip
    assert got.kind == "computed" and [o.raw for o in got.computed.operands] == ["95", "44"]
    got = read("What is the combined FY2027 vehicles budget of Field Services and Records Management?", ev, facts)
    assert got.kind == "computed" and got.answer == "$139 thousand"


def test_an_operand_whose_name_no_table_holds_is_not_found() -> None:
    ev, facts = _units()
    got = read("How much more does the Town of Brin budget for vehicles in FY2027 under Field Services than under "
               "Parks Maintenance?", ev, facts)  # fmt: skip
    assert not got.found  # never the Field Services or Records line for a unit the tables lack


def test_own_words_leave_periods_aside() -> None:
    from stratagraph.reading.reader import own_words

    ops = ["What is Orla's cargo revenue in the third quarter of 2024?", "What is Orla's cargo revenue in the second quarter 2024?"]
    assert own_words(ops[0], ops) == () and own_words(ops[1], ops) == ()
    ops = ["How much is budgeted under Field Services?", "How much is budgeted under Records Management?"]
    assert [sorted(min(w) for w in own_words(o, ops)) for o in ops] == [["field", "servic"], ["manag", "record"]]


def test_of_member_keeps_the_lines_of_the_operands_own_unit() -> None:
    from stratagraph.reading.reader import of_member, own_words
    from stratagraph.reading.sentences import sentences

    ev, facts = _units()
    sents = sentences(ev, facts)
    ops = ["How much is budgeted for vehicles under Field Services?", "How much is budgeted for vehicles under Records Management?"]
    kept = of_member(sents, own_words(ops[0], ops))
    assert kept and {s.passage.section_path[-1] for s in kept} == {"3.1 Field Services"}
    kept = of_member(sents, own_words(ops[1], ops))  # "Services" of the parent heading is not "Field Services"
    assert kept and {s.passage.section_path[-1] for s in kept} == {"3.2 Records Management"}


def test_words_of_the_document_title_are_held_by_every_line() -> None:
    rows = {"Personnel": ("410", "433", "23"), "Technology": ("52", "61", "9"), "Total": ("462", "494", "32")}
    lines = [_HEADER] + [f"{label}; FY2026 Actual: {a}; FY2027 Budget: {b}; Change: {c}" for label, (a, b, c) in rows.items()]
    ev = [passage("\n".join(lines), title="Orla County Library District Budget", path=["2. Branches", "2.1 Mobile Services"])]
    facts = {ev[0].chunk_id: [row_fact(label, {"FY2026 Actual": (a, 1000), "FY2027 Budget": (b, 1000), "Change": (c, 1000)})
                              for label, (a, b, c) in rows.items()]}  # fmt: skip
    got = read("How much does the Orla County library district budget for Technology in FY2027 under Mobile Services?", ev, facts)
    assert got.found and "61" in got.answer


def test_a_figure_the_question_attributes_is_read_from_that_source() -> None:
    plan = passage("Dredging; FY2026 Actual: 300; FY2027 Budget: 410; Change: 110", title="Town of Brin Budget",
                   path=["4. Harbour"], doc="budget.md", n=0)  # fmt: skip
    memo = passage("The audit committee projects FY2027 dredging costs of $520 thousand, above the budget's figure.",
                   title="Audit Committee Memo on the Harbour Budget", path=["2. Dredging"], doc="memo.md", n=1)  # fmt: skip
    facts = {plan.chunk_id: [row_fact("Dredging", {"FY2026 Actual": ("300", 1000), "FY2027 Budget": ("410", 1000),
                                                   "Change": ("110", 1000)})]}  # fmt: skip
    got = read("What FY2027 dredging cost does the audit committee project?", [plan, memo], facts)
    assert got.answer == "$520 thousand"
    got = read("What FY2027 dredging cost does the town budget give?", [plan, memo], facts)
    assert "410" in got.answer


def _segments() -> tuple[list, dict]:
    """A segment table whose total row says what it measures, and a restatement table."""
    seg = passage("Segment | Q3 2025 | Q3 2024 | Change\nFerries; Q3 2025: 610; Q3 2024: 580; Change: 30\n"
                  "Cargo; Q3 2025: 240; Q3 2024: 250; Change: (10)\nTotal revenue; Q3 2025: 850; Q3 2024: 830; Change: 20",
                  title="Orla Lines Third Quarter 2025 Report", path=["Segment Results"], doc="q3.md", n=0)  # fmt: skip
    res = passage("Segment | Q2 2025 as reported | Q2 2025 restated | Change\n"
                  "Ferries; Q2 2025 as reported: 600; Q2 2025 restated: 575; Change: (25)\n"
                  "Cargo; Q2 2025 as reported: 230; Q2 2025 restated: 230; Change: 0",
                  title="Orla Lines Third Quarter 2025 Report", path=["Restatement of Second-Quarter Revenue"], doc="q3.md", n=1)  # fmt: skip
    facts = {
        seg.chunk_id: [row_fact(l, {"Q3 2025": (a, 1000), "Q3 2024": (b, 1000), "Change": (c, 1000)})
                       for l, (a, b, c) in {"Ferries": ("610", "580", "30"), "Cargo": ("240", "250", "(10)"),
                                            "Total revenue": ("850", "830", "20")}.items()],
        res.chunk_id: [row_fact(l, {"Q2 2025 as reported": (a, 1000), "Q2 2025 restated": (b, 1000), "Change": (c, 1000)})
                       for l, (a, b, c) in {"Ferries": ("600", "575", "(25)"), "Cargo": ("230", "230", "0")}.items()],
    }  # fmt: skip
    return [seg, res], facts


def test_a_tables_total_row_says_what_its_rows_measure() -> None:
    ev, facts = _segments()
    got = read("What was Orla Lines' ferries revenue in the third quarter of 2025?", ev, facts)
    assert got.found and "610" in got.answer  # the Ferries row of a table whose total is "Total revenue"


def test_a_restated_figure_stands_unless_the_original_is_asked() -> None:
    ev, facts = _segments()
    got = read("By how much did Orla Lines' ferries revenue increase from Q2 2025 to Q3 2025?", ev, facts)
    assert got.kind == "computed" and "35" in got.answer  # 610 - 575 (restated), not 610 - 600
    got = read("What ferries revenue did Orla Lines originally report for Q2 2025?", ev, facts)
    assert "600" in got.answer


def test_the_first_quarter_is_a_period_not_the_original_figure() -> None:
    res = passage("Segment | Q1 2025 as reported | Q1 2025 restated | Change\n"
                  "Ferries; Q1 2025 as reported: 600; Q1 2025 restated: 575; Change: (25)",
                  title="Orla Lines Second Quarter 2025 Report", path=["Restatement of First-Quarter Revenue"], doc="q2.md")  # fmt: skip
    facts = {res.chunk_id: [row_fact("Ferries", {"Q1 2025 as reported": ("600", 1000), "Q1 2025 restated": ("575", 1000),
                                                 "Change": ("(25)", 1000)})]}  # fmt: skip
    assert "575" in read("What was Orla Lines' ferries revenue in the first quarter of 2025?", [res], facts).answer
    assert "600" in read("What ferries revenue did Orla Lines originally report for the first quarter of 2025?", [res], facts).answer


def _divisions() -> tuple[list, dict]:
    """Three units whose headings share their head noun ("... Division"); every one has a Personnel line."""
    tables = [("4.1 Pumping Division", ("2,100", "2,240", "140")), ("4.2 Metering Division", ("930", "975", "45")),
              ("4.3 Billing Division", ("610", "655", "45"))]  # fmt: skip
    ev, facts = [], {}
    for n, (section, cells) in enumerate(tables):
        p, f = _table(section, {"Personnel": cells, "Total": cells}, n)
        p = p.model_copy(update={"section_path": ["4. Operations", section]})
        ev.append(p)
        facts[p.chunk_id] = f
    return ev, facts


def test_a_row_under_another_unit_of_the_named_kind_is_not_about_the_name() -> None:
    ev, facts = _divisions()
    for unit, want in (("Metering Division", "975"), ("Billing Division", "655"), ("Pumping Division", "2,240")):
        got = read(f"What does the Town of Brin budget in FY2027 for personnel in the {unit}?", ev, facts)
        assert got.found and want in got.answer, (unit, got.answer)


def test_a_year_the_labels_write_in_a_name_is_no_period() -> None:
    ev, facts = _table("5.1 Debt Service", {"Principal — Series 2031 Bonds": ("700", "720", "20"),
                                            "Interest — Series 2031 Bonds": ("310", "296", "(14)"),
                                            "Interest — Series 2035 Notes": ("85", "90", "5")}, 0)  # fmt: skip
    got = read("What interest payment on the Series 2031 bonds does the Town of Brin budget for FY2027?", [ev], {ev.chunk_id: facts})
    assert got.found and "296" in got.answer


def test_a_row_the_question_names_is_of_the_kind_its_noun_says() -> None:
    ev, facts = _table("1.1 Revenue by Source", {"State Grant": ("4,100", "4,350", "250"), "Harbour Dues": ("610", "640", "30"),
                                                 "Other Income": ("75", "80", "5")}, 0)  # fmt: skip
    got = read("What Harbour Dues income does the Town of Brin budget for FY2027?", [ev], {ev.chunk_id: facts})
    assert got.found and "640" in got.answer


def test_the_source_a_question_names_is_where_not_what_and_its_column_is_the_one_read() -> None:
    plan = passage("Dredging; FY2026 Actual: 300; FY2027 Budget: 410; Change: 110", title="Town of Brin Budget",
                   path=["4. Harbour"], doc="budget.md", n=0)  # fmt: skip
    memo = passage("Item | Budget figure | Reviewed figure | Difference\n"
                   "Dredging, FY2027; Budget figure: 410; Reviewed figure: 465; Difference: 55",
                   title="Review Memorandum on the Town of Brin Harbour Budget", path=["2. Differences"], doc="memo.md", n=1)  # fmt: skip
    facts = {plan.chunk_id: [row_fact("Dredging", {"FY2026 Actual": ("300", 1000), "FY2027 Budget": ("410", 1000),
                                                   "Change": ("110", 1000)})],
             memo.chunk_id: [row_fact("Dredging, FY2027", {"Budget figure": ("410", 1000), "Reviewed figure": ("465", 1000),
                                                           "Difference": ("55", 1000)})]}  # fmt: skip
    got = read("The reviewer's memo disputes Brin's FY2027 dredging budget. What figure does the reviewer say it should be?",
               [plan, memo], facts)  # fmt: skip
    assert got.found and "465" in got.answer


def test_the_figure_that_stands_is_the_restated_one_and_the_later_reports() -> None:
    prose = passage("Ferry revenue for the second quarter of 2026, previously reported as $4.1 million, has been restated "
                    "to $3.9 million.", title="Orla Ferries Q3 2026 Letter", metadata={"quarter": "Q3", "year": 2026})  # fmt: skip
    assert read("What was Orla's ferry revenue in the second quarter of 2026?", [prose]).answer == "$3.9 million"
    assert read("What was Orla's ferry revenue in the second quarter of 2026 as originally reported?", [prose]).answer == "$4.1 million"
    q2 = passage("Segment revenue | Q2 2026 | Q2 2025\nFerries; Q2 2026: 410; Q2 2025: 380", title="Orla Ferries Q2 2026 Letter",
                 doc="q2.md", n=0, metadata={"quarter": "Q2", "year": 2026})  # fmt: skip
    q3 = passage("Segment revenue | Q3 2026 | Q2 2026\nFerries; Q3 2026: 430; Q2 2026: 395", title="Orla Ferries Q3 2026 Letter",
                 doc="q3.md", n=1, metadata={"quarter": "Q3", "year": 2026})  # fmt: skip
    facts = {q2.chunk_id: [row_fact("Ferries", {"Q2 2026": ("410", 1000), "Q2 2025": ("380", 1000)})],
             q3.chunk_id: [row_fact("Ferries", {"Q3 2026": ("430", 1000), "Q2 2026": ("395", 1000)})]}  # fmt: skip
    assert "395" in read("What was Orla's ferry revenue in the second quarter of 2026?", [q2, q3], facts).answer


def test_a_gap_asked_between_two_documents_or_two_columns_of_one_row() -> None:
    plan = passage("Dredging; FY2026 Actual: 300; FY2027 Budget: 410; Change: 110", title="Town of Brin Budget",
                   path=["4. Harbour"], doc="budget.md", n=0)  # fmt: skip
    memo = passage("Item | Committee figure\nDredging, FY2027; Committee figure: 465", title="Town of Brin Review Committee Memo",
                   path=["2. Findings"], doc="memo.md", n=1)  # fmt: skip
    facts = {plan.chunk_id: [row_fact("Dredging", {"FY2026 Actual": ("300", 1000), "FY2027 Budget": ("410", 1000),
                                                   "Change": ("110", 1000)})],
             memo.chunk_id: [row_fact("Dredging, FY2027", {"Committee figure": ("465", 1000)})]}  # fmt: skip
    got = read("According to the review committee, by how much does the Town of Brin budget understate FY2027 dredging?",
               [plan, memo], facts)  # fmt: skip
    assert got.kind == "computed" and got.answer == "$55 thousand" and len(got.citations) == 2
    letter = passage("Item | Plan figure | Auditor's figure\nFerry subsidy, FY2027; Plan figure: 7,410; Auditor's figure: 7,860",
                     title="Auditor's Letter on the Town of Brin Budget", doc="letter.md", n=0)  # fmt: skip
    facts = {letter.chunk_id: [row_fact("Ferry subsidy, FY2027", {"Plan figure": ("7,410", 1000), "Auditor's figure": ("7,860", 1000)})]}
    got = read("By how much does the auditor believe the Town of Brin plan understates the FY2027 ferry subsidy?", [letter], facts)
    assert got.kind == "computed" and got.answer == "$450 thousand"


def test_a_row_is_about_the_measure_its_tables_total_row_names() -> None:
    """The "Ferries" row of a table whose last row is "Total revenue" is a revenue: asked for "ferry revenue"
    in Q3 it answers, over a restatement sentence about ferry revenue of Q2 (another quarter)."""
    table = passage("Segment | Q3 2025 | Q3 2024 | Change\nFerries; Q3 2025: 2,410; Q3 2024: 2,200; Change: 210\n"
                    "Buses; Q3 2025: 1,120; Q3 2024: 1,090; Change: 30\nTotal revenue; Q3 2025: 3,530; Q3 2024: 3,290; Change: 240",
                    title="Orrin Transit Q3 2025 report", path=["Segment Results"], n=0)  # fmt: skip
    restated = passage("Ferry revenue for the second quarter of 2025, previously reported as $2,380 thousand, has been "
                       "restated to $2,300 thousand.", title="Orrin Transit Q3 2025 report", path=["Restatement of Ferry Revenue"], n=1)  # fmt: skip
    rows = {"Ferries": ("2,410", "2,200", "210"), "Buses": ("1,120", "1,090", "30"), "Total revenue": ("3,530", "3,290", "240")}
    facts = {table.chunk_id: [row_fact(k, {"Q3 2025": (a, 1000), "Q3 2024": (b, 1000), "Change": (c, 1000)}) for k, (a, b, c) in rows.items()]}
    got = read("What was Orrin Transit's ferry revenue in the third quarter of 2025?", [restated, table], facts)
    assert got.answer == "$2,410 thousand"


def test_a_cells_period_is_its_columns_not_the_nearest_in_the_row() -> None:
    """"Storm drains; FY2025 Adopted: 386; FY2026 Proposed: 512": 386 is FY2025's, though "FY2026" is written
    nearer to it than "FY2025"; a change between the two reads both."""
    ev = passage("Line item | FY2025 Adopted | FY2026 Proposed | Change\nStorm drains; FY2025 Adopted: 386; FY2026 Proposed: 512; Change: 126",
                 title="Town of Brin Budget", path=["2. Public Works"])  # fmt: skip
    facts = {ev.chunk_id: [row_fact("Storm drains", {"FY2025 Adopted": ("386", 1000), "FY2026 Proposed": ("512", 1000), "Change": ("126", 1000)})]}
    got = read("By what percentage does Brin's storm drains budget rise from FY2025 to FY2026?", [ev], facts)
    assert got.answer == "32.6%"


def test_a_noun_that_only_says_money_is_spent_is_no_line_word() -> None:
    """"What is Brin's FY2026 road salt spending for the Central Depot?": the line is "Road salt"; "spending"
    says the answer is money paid out, which the table's currency says."""
    ev, facts = _budget()
    got = read("What is Brin's FY2027 road salt spending at the Central Depot?", ev, facts)
    assert got.answer == "$85 thousand"


def test_a_table_chunks_caption_is_the_sentence_carried_before_it() -> None:
    """A table that is a chunk of its own takes its caption from the sentence carried over from the chunk
    before it (BAG-RAG eq. 2): "Revenue by segment was as follows" makes the "Charters" row a revenue; a
    sentence that says what the table leaves out is no caption."""
    text = "Segment | Q1 2026 | Q1 2025\nCharters; Q1 2026: 27.1; Q1 2025: 24.8\nFreight; Q1 2026: 38.6; Q1 2025: 35.9\nTotal; Q1 2026: 65.7; Q1 2025: 60.7"
    rows = {"Charters": ("27.1", "24.8"), "Freight": ("38.6", "35.9"), "Total": ("65.7", "60.7")}

    def table(context: str) -> tuple:
        ev = passage(text, title="Orrin Ferries Q1 2026 call", path=["Prepared Remarks"]).model_copy(update={"context": context})
        facts = {ev.chunk_id: [{"type": "table_row", "description": k, "quantities": [
            {"value": str(Decimal(v) * 1_000_000), "raw": v, "scale": 1_000_000, "currency": "USD", "unit": "USD",
             "label": f"{k} | {c}", "is_total": k == "Total"} for c, v in zip(("Q1 2026", "Q1 2025"), pair, strict=True)]}
            for k, pair in rows.items()]}  # fmt: skip
        return [ev], facts

    ev, facts = table("Net income was $4.1 million. Revenue by segment was as follows, in millions of dollars.")
    assert read("How much revenue did Orrin Ferries' Charters segment generate in the first quarter of 2025?", ev, facts).answer == "$24.8 million"
    ev, facts = table("Charter revenue is budgeted separately and not included in this table.")
    assert read("How much revenue did Orrin Ferries' Charters segment generate in the first quarter of 2025?", ev, facts).kind == "not_found"
