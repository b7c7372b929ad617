"""BiG-RAG Algorithm 5 (query decomposition) over the real spaCy pipeline."""

from __future__ import annotations

import pytest

from stratagraph.retrieval.decompose import FINAL, SubQuery, chain_length, decompose


@pytest.fixture(scope="module")
def nlp():
    from stratagraph.ingest.extractors.spacy_nlp import load_nlp

    return load_nlp()


def _plan(subs):
    return [(s.text, s.target, s.depends_on) for s in subs]


def test_the_papers_example_decomposes_innermost_first(nlp):
    subs = decompose(nlp, "Who is the spouse of the director of the film that won Best Picture in 2019?")
    assert _plan(subs) == [
        ("Which film won Best Picture in 2019?", "var1", []),
        ("What is the director of {var1}?", "var2", ["var1"]),
        ("Who is the spouse of {var2}?", FINAL, ["var2"]),
    ]
    assert [s.kind for s in subs] == ["relative", "of", "final"]


def test_nested_of_chain_resolves_the_inner_reference_first(nlp):
    subs = decompose(nlp, "What is the date of death of the director of film Polish Wedding?")
    # "date of death" is one relation (a bare noun is not a hop of its own); the director is resolved first
    assert _plan(subs) == [
        ("What is the director of film Polish Wedding?", "var1", []),
        ("What is the date of death of {var1}?", FINAL, ["var1"]),
    ]


def test_possessive_becomes_an_of_question(nlp):
    subs = decompose(nlp, "Where did Eda Marsh's husband die?")
    assert _plan(subs) == [
        ("What is the husband of Eda Marsh?", "var1", []),
        ("Where did {var1} die?", FINAL, ["var1"]),
    ]


def test_subject_reference_is_resolved_before_the_question_about_it(nlp):
    subs = decompose(nlp, "Where was the director of film The Falcon born?")
    assert subs[0].text == "What is the director of film The Falcon?"  # the title stays whole
    assert subs[-1].text == "Where was {var1} born?" and subs[-1].depends_on == ["var1"]


def test_coordinated_names_split_into_independent_sub_questions(nlp):
    subs = decompose(nlp, "Who was born first, Jean Martin or Dinah Shore?")
    assert _plan(subs) == [
        ("Who was born first, Jean Martin?", "var1", []),
        ("Who was born first, Dinah Shore?", "var2", []),
        ("Who was born first, Jean Martin or Dinah Shore?", FINAL, ["var1", "var2"]),
    ]
    both = decompose(nlp, "Are Mara Quill and Tom Bell both film directors?")
    assert [s.text for s in both[:2]] == [
        "Are Mara Quill film directors?",
        "Are Tom Bell film directors?",
    ]


@pytest.mark.parametrize("question", ["What is the capital of France?", "Who founded Microsoft?"])
def test_a_simple_question_decomposes_to_itself(nlp, question):
    assert _plan(decompose(nlp, question)) == [(question, FINAL, [])]


def test_render_substitutes_bindings_and_drops_unbound_variables():
    sq = SubQuery(text="Who is the spouse of {var2}?", target=FINAL, depends_on=["var2"])
    assert sq.variables() == ["var2"]
    assert sq.render({"var2": "Mara Quill"}) == "Who is the spouse of Mara Quill?"
    assert sq.render() == "Who is the spouse of?"


def test_a_relative_clause_belongs_to_the_noun_before_its_marker(nlp):
    subs = decompose(nlp, "What is the name of the waterfall in the country where the Bubye River is found?")
    assert [s.text for s in subs] == [
        "Which country where the Bubye River is found?",
        "What is the name of the waterfall in {var1}?",
    ]


def test_a_reference_leaves_the_questions_own_verb(nlp):
    subs = decompose(nlp, "What position did the receiver of the 2007 FIFA U-20 Golden Shoe play?")
    assert subs[-1].text == "What position did {var1} play?"
    taken = decompose(nlp, "When was the country that produced Fist Power taken by the British?")
    assert [s.text for s in taken] == ["Which country produced Fist Power?", "When was {var1} taken by the British?"]


def test_idioms_place_names_and_titles_are_no_hops(nlp):
    charge = decompose(nlp, "Who was in charge of the country where the composer of Aschenbrodel was a citizen?")
    assert charge[-1].text == "Who was in charge of {var1}?"  # "in charge of" is no relation to resolve
    village = decompose(nlp, "When did the country where the village of Clonbrook is located, become a member of CARICOM?")
    assert village[0].text == "Which country where the village of Clonbrook is located?"
    title = decompose(nlp, "Who is the director of The Girl Who Kicked the Hornets' Nest?")
    assert len(title) == 1  # "Hornets' Nest" is part of the title, not a possessive to resolve


def test_a_participle_clause_inside_an_of_phrase_is_resolved_first(nlp):
    # like "the film that won ..." in the paper's example: the company's clause nests inside the flagship
    q = "How long is the flagship of the steamship company headquartered in Pellisk?"
    subs = decompose(nlp, q)
    assert _plan(subs) == [
        ("Which steamship company headquartered in Pellisk?", "var1", []),
        ("What is the flagship of {var1}?", "var2", ["var1"]),
        ("How long is {var2}?", FINAL, ["var2"]),
    ]
    assert chain_length(subs) == 3


def test_a_participle_clause_the_question_needs_stays_its_verb(nlp):
    # no predicate but the clause: the director was educated at Oxford, and the film is no reference of its own
    subs = decompose(nlp, "When was the director of the film educated at Oxford?")
    assert _plan(subs) == [
        ("What is the director of the film?", "var1", []),
        ("When was {var1} educated at Oxford?", FINAL, ["var1"]),
    ]
    # a verb after the clause is the question's own: the clause nests and the verb stays in the final question
    called = decompose(nlp, "What was the flagship of the company based in Oslo called?")
    assert [s.text for s in called] == ["Which company based in Oslo?", "What was the flagship of {var1} called?"]


def test_a_do_support_verb_read_as_a_noun_stays_in_the_final_question(nlp):
    river = decompose(nlp, "On which river does the hometown of Kalloway Instruments' founder lie?")
    assert _plan(river) == [
        ("What is the founder of Kalloway Instruments?", "var1", []),
        ("What is the hometown of {var1}?", "var2", ["var1"]),
        ("On which river does {var2} lie?", FINAL, ["var2"]),
    ]
    q = "How many workers did the firm founded by Aurel Vintrasse's best-known pupil employ at its peak?"
    firm = decompose(nlp, q)
    assert _plan(firm) == [
        ("What is the best-known pupil of Aurel Vintrasse?", "var1", []),
        ("Which firm founded by {var1}?", "var2", ["var1"]),
        ("How many workers did {var2} employ at its peak?", FINAL, ["var2"]),
    ]
    assert chain_length(river) == chain_length(firm) == 3
    # the same rule on questions of no bundled set
    study = decompose(nlp, "What did the brother of Ivo Lenz's wife study at university?")
    assert _plan(study) == [
        ("What is the wife of Ivo Lenz?", "var1", []),
        ("What is the brother of {var1}?", "var2", ["var1"]),
        ("What did {var2} study at university?", FINAL, ["var2"]),
    ]


@pytest.mark.parametrize(
    ("question", "plan"),
    [
        (
            "Which ship is the flagship of the company headquartered in Oslo?",
            ["Which company headquartered in Oslo?", "What is the flagship of {var1}?", "Which ship is {var2}?"],
        ),
        (
            "What nationality is the director of the film released in 1999?",
            ["Which film released in 1999?", "What is the director of {var1}?", "What nationality is {var2}?"],
        ),
    ],
)
def test_a_question_whose_wh_noun_is_its_predicate_nests_the_participle_clause(nlp, question, plan):
    subs = decompose(nlp, question)
    assert [s.text for s in subs] == plan and chain_length(subs) == 3


def test_real_noun_compounds_are_no_misread_verb(nlp):
    # a compound an "of" phrase follows is a noun phrase; the misread verb is the compound at its end
    of = decompose(nlp, "How many workers did the steamship company of Pellisk employ?")
    assert _plan(of) == [
        ("What is the steamship company of Pellisk?", "var1", []),
        ("How many workers did {var1} employ?", FINAL, ["var1"]),
    ]
    # a question whose verb is tagged a verb keeps every compound in its reference
    play = decompose(nlp, "What instrument does the founder of the steamship company play?")
    assert [s.text for s in play] == [
        "What is the founder of the steamship company?",
        "What instrument does {var1} play?",
    ]


def test_a_relative_clause_without_its_marker(nlp):
    subs = decompose(nlp, "What currency predated the Euro in the country Signmark is from?")
    assert [s.text for s in subs] == ["Which country Signmark is from?", "What currency predated the Euro in {var1}?"]


def test_a_list_of_three_is_not_split_into_pairs(nlp):
    subs = decompose(nlp, "What movie stars Morgan Freeman, Robert De Niro and the producer of The Jewel of the Nile?")
    assert [s.kind for s in subs] == ["of", "final"]


def test_the_name_of_what_a_sub_question_finds_is_no_extra_hop(nlp):
    subs = decompose(nlp, "What is the name of the pop band founded by one of the stars of Aisa Yeh Jahaan?")
    assert [(s.target, s.kind) for s in subs] == [("var1", "of"), (FINAL, "final")]
    assert subs[-1].text == "Which pop band founded by one of {var1}?"


def test_an_interrogative_which_at_the_end_opens_no_relative_clause(nlp):
    q = "Steve Johnson is the current head football coach at a University which also has a second campus in which California city?"
    assert [(s.target, s.text) for s in decompose(nlp, q)] == [(FINAL, q)]


def test_chain_length_counts_sub_questions_answered_one_after_another(nlp):
    paper = decompose(nlp, "Who is the spouse of the director of the film that won Best Picture in 2019?")
    assert chain_length(paper) == 3
    assert chain_length(decompose(nlp, "Who founded Microsoft?")) == 1
    # a comparison's conjuncts restate it per side: one step, or one more per reference they share
    both = [
        SubQuery(text="When was A founded?", target="var1", kind="conjunct"),
        SubQuery(text="When was B founded?", target="var2", kind="conjunct"),
        SubQuery(text="Which is older?", depends_on=["var1", "var2"]),
    ]
    assert chain_length(both) == 1
    shared = [
        SubQuery(text="Which director died first?", target="var1", kind="relative"),
        SubQuery(text="Which film has {var1}, A?", target="var2", depends_on=["var1"], kind="conjunct"),
        SubQuery(text="Which film has {var1}, B?", target="var3", depends_on=["var1"], kind="conjunct"),
        SubQuery(text="Which film has {var1}, A or B?", depends_on=["var2", "var3"]),
    ]
    assert chain_length(shared) == 2
    # a variable no sub-question binds, and a (malformed) cycle, count nothing
    assert chain_length([SubQuery(text="Where was {var7} born?", depends_on=["var7"])]) == 1
    loop = [SubQuery(text="{var2}?", target="var1", depends_on=["var2"]), SubQuery(text="{var1}?", target="var2", depends_on=["var1"])]
    assert chain_length(loop) == 2
    assert chain_length([]) == 0


def test_a_passive_questions_last_participle_is_its_verb_not_the_relative_clauses(nlp):
    """"In what year was the company that made the Hall its headquarters *founded*?": the small parser hangs
    "its headquarters founded" on the relative clause as a clause of its own; the participle is the question's."""
    subs = decompose(nlp, "In what year was the company that made the Ember Hall its headquarters founded?")
    assert _plan(subs) == [
        ("Which company made the Ember Hall its headquarters?", "var1", []),
        ("In what year was {var1} founded?", FINAL, ["var1"]),
    ]


def test_a_relative_clause_without_its_marker_and_a_past_verb_is_a_reference(nlp):
    """"the society Ilse Varantov founded": a contact clause (no "that"), its subject a name, its verb past; a
    reference that ends inside it takes it whole, and a passive question's own participle is no such clause."""
    subs = decompose(nlp, "Who was the architect of the building that houses the society Ilse Varantov founded?")
    assert _plan(subs) == [
        ("Which society Ilse Varantov founded?", "var1", []),
        ("Which building houses {var1}?", "var2", ["var1"]),
        ("Who was the architect of {var2}?", FINAL, ["var2"]),
    ]
    assert [s.text for s in decompose(nlp, "Where is the company Mara Quell founded based?")] == [
        "Which company Mara Quell founded?", "Where is {var1} based?"]
    assert [s.text for s in decompose(nlp, "When was the bridge Harlow built?")] == ["When was the bridge Harlow built?"]
