"""Hypothesis strategies for inputs nobody wrote by hand: odd Unicode, giant lines, deep headings and lists,
ragged tables, JSON of the wrong types, broken PDFs, questions and filters with operators and injections."""

from __future__ import annotations

from hypothesis import strategies as st

#: characters that break naive parsers: controls, bidi marks, zero-width, combining, surrogate-free astral
ODD = "\x00\x01\x0b\x0c\x1b\x7f\u00a0\u00ad\u200b\u200d\u202e\u2028\u2029\ufeff\ufffd\u0301\U0001f600\U000e0001"
WORDS = ["Acme", "revenue", "2024", "$1.2m", "§", "1.2", "IV.", "Chapter 3", "Part I", "|", "---", "```", "<b>", "&amp;",
         "*", "**", "_", "[1]", "[x](http://e.com)", "#", "==", "--", "%", "'", '"', "\\", "DROP TABLE", "' OR 1=1 --"]  # fmt: skip

odd_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)) | st.sampled_from(ODD), max_size=80)
word = st.sampled_from(WORDS) | odd_text
line_text = st.lists(word, max_size=12).map(" ".join)

markdown_line = st.one_of(
    line_text,
    st.tuples(st.integers(1, 12), line_text).map(lambda t: "#" * t[0] + " " + t[1]),  # deep (and over-deep) headings
    st.tuples(st.integers(0, 40), line_text).map(lambda t: "  " * t[0] + "- " + t[1]),  # nested lists
    st.lists(line_text, max_size=9).map(lambda cells: "|" + "|".join(cells) + "|"),  # ragged table rows
    st.just("|---|---|"),
    st.just("```"),
    st.just("---"),
    st.sampled_from(["===", "1. ", "1.2.3 Scope", "IV. Results", "Chapter 9", "title: [unclosed", ":"]),
    st.integers(1000, 20000).map(lambda n: "x" * n),  # a giant line
)
markdown_doc = st.lists(markdown_line, max_size=40).map("\n".join)

_tag = st.sampled_from(["h1", "h2", "h6", "p", "div", "ul", "ol", "li", "table", "tr", "td", "th", "pre", "script",
                        "style", "span", "br", "caption", "thead", "tbody", "b"])  # fmt: skip
html_doc = st.recursive(
    line_text.map(lambda t: t.replace("<", "&lt;")),
    lambda inner: st.tuples(_tag, st.lists(inner, max_size=4), st.booleans()).map(
        lambda t: f"<{t[0]}>" + "".join(t[1]) + (f"</{t[0]}>" if t[2] else "")  # unclosed tags too
    ),
    max_leaves=60,
)

json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | odd_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["id", "title", "text", "body", "metadata", "year", "x"]) | odd_text, inner, max_size=5),
    max_leaves=30,
)

questions = st.one_of(
    st.lists(word, min_size=1, max_size=30).map(" ".join),
    st.sampled_from(["How many", "Who", "Which quarter", "What is the ratio of", "before or after"]).flatmap(
        lambda head: line_text.map(lambda rest: f"{head} {rest}?")
    ),
    st.integers(2000, 20000).map(lambda n: ("why " * n)[:n]),  # 20k-character questions
)

filter_key = st.sampled_from(["year", "company", "$where", "a.b", "key with space", "' OR 1=1 --", "$and", ""]) | odd_text
filter_value = (
    st.sampled_from(["2024", "true", "1e309", "NaN", "$ne", "'; DROP TABLE nodes; --", '{"$gt": 0}', ""])
    | odd_text | st.integers() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False)
)  # fmt: skip
filter_pairs = st.lists(st.tuples(filter_key, st.sampled_from(["=", "==", ":", "", "=="]), filter_value), max_size=6).map(
    lambda items: [f"{k}{op}{v}" for k, op, v in items]
)

_numbers = st.one_of(st.integers(-(10**40), 10**40).map(str), st.decimals(allow_nan=False, allow_infinity=False).map(str),
                     st.sampled_from(["0", "1e999", "1e-999", "0.1", "9" * 60, "1_000", "0x10", "inf", "nan"]))  # fmt: skip
_ops = st.sampled_from(["+", "-", "*", "/", "//", "%", "**", ", "])
_funcs = st.sampled_from(["sum", "mean", "min", "max", "count", "round", "abs", "pct_change", "ratio", "difference",
                          "__import__", "open", "eval", "x.y", "lambda: 1", "[1,2][0]"])  # fmt: skip
expressions = st.recursive(
    _numbers,
    lambda inner: st.one_of(
        st.tuples(inner, _ops, inner).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
        inner.map(lambda e: f"({e})"),
        inner.map(lambda e: f"-{e}"),
        st.tuples(_funcs, st.lists(inner, max_size=3)).map(lambda t: f"{t[0]}({', '.join(t[1])})"),
        st.lists(inner, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
    ),
    max_leaves=25,
) | odd_text
