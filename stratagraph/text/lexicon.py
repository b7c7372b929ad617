"""Every English word list the reader uses, in one place, each with the class of language it covers.

The no-LLM reader reads English: these lists, Porter stemming and spaCy's ``en_core_web_sm`` are English. A
corpus in another language needs a chat model (the workflows' LLM path), which reads any language the model
does. A list here names a class of wording, never a question of some data set: a word is added because it
belongs to the class, and the unit tests of the reader use sentences written for them.
"""

from __future__ import annotations

__all__ = [
    "AMOUNT_PHRASES",
    "MODEL_ADDRESS",
    "MONTHS",
    "ORDINALS",
    "MODEL_COMMANDS",
    "MODEL_NOUNS",
    "MODEL_OVERRIDES",
    "PRIOR_WORDS",
    "REPORTING_VERBS",
    "GAP_WORDS",
    "OPEN_ENDED_WORDS",
    "RESTATED_WORDS",
    "RULE_NOUNS",
    "SECRET_NOUNS",
    "STORE_WRITES",
    "TOOL_NOUNS",
    "TOOL_VERBS",
    "AMOUNT_VERBS",
    "QUANTITY_VERBS",
    "FORECAST_WORDS",
    "ONLY_ADDING",
    "ORIGINAL_ASKED",
    "ORIGINAL_WORDS",
    "AUXILIARIES",
    "CAUSE_MARKERS",
    "ATTRIBUTION_WORDS",
    "CHANGE_WORDS",
    "CURRENCY_NOUNS",
    "CITATION_WORDS",
    "CITING_PHRASES",
    "CITING_VERBS",
    "DOCUMENT_NOUNS",
    "COMPARE_LATER",
    "COMPARE_EARLIER",
    "COMPARE_LESS",
    "COMPARE_MORE",
    "DATE_NOUNS",
    "DERIVED_COLUMNS",
    "GENERIC_PEOPLE",
    "GROUP_WORDS",
    "HAVING_VERBS",
    "HOW_NUMBER",
    "IRREGULAR_VERBS",
    "RATE_ADJECTIVES",
    "LIFE_VERBS",
    "MEASURES",
    "MIN_WORDS",
    "NOUN_TYPES",
    "NUMBER_NOUNS",
    "OPERATION_WORDS",
    "ORG_NOUNS",
    "PEOPLE_NOUNS",
    "PERIOD_WORDS",
    "PERSON_NOUNS",
    "PLACE_NOUNS",
    "QUANTIFIERS",
    "QUESTION_WORDS",
    "SHAPE_NOUNS",
    "STRUCTURAL_NOUNS",
    "PUBLISHED_AFTER",
    "UNIT_NOUNS",
    "GROUP_NOUNS",
    "SECTION_NAMES",
    "SUMMARY_HEADINGS",
    "SUM_WORDS",
    "SUPERLATIVE_MAX",
    "SUPERLATIVE_MIN",
    "START_VERBS",
    "Measure",
]

from dataclasses import dataclass

# ------------------------------------------------------------------------------------------ question form
#: wh-words: they open a question and are never content words
QUESTION_WORDS = frozenset("what which who whom whose when where why how".split())
#: auxiliaries and modals that open a yes/no question ("Is ...", "Did ...", "Can ...")
AUXILIARIES = frozenset("is are was were am do does did has have had can could will would should shall may might must".split())

# ------------------------------------------------------------------------------------------ answer types
#: nouns naming people by role, kin or occupation ("which *composer*", "the *founder* of")
PERSON_NOUNS = frozenset(
    """person people man woman men women boy girl child son daughter father mother parent brother sister wife
    husband spouse partner widow grandfather grandmother uncle aunt nephew niece cousin heir successor predecessor
    founder cofounder co-founder owner director author writer poet novelist playwright screenwriter journalist
    editor publisher actor actress singer musician composer conductor pianist guitarist drummer rapper artist
    painter sculptor photographer architect designer engineer inventor scientist physicist chemist biologist
    mathematician economist historian philosopher professor teacher student pupil graduate apprentice mentor
    doctor physician surgeon nurse lawyer judge politician senator governor mayor minister president
    chancellor premier king queen prince princess emperor empress duke monarch ruler pope bishop priest leader
    chair chairman chairwoman chairperson ceo cfo executive manager head captain coach player athlete footballer
    explorer pilot sailor soldier general admiral officer commander producer investor entrepreneur
    businessman businesswoman banker merchant worker employee member winner recipient""".split()
)
#: nouns counting people ("how many *people*": employees, residents and members are people too)
PEOPLE_NOUNS = frozenset(
    """people person persons individual individuals employee employees worker workers staff member members resident
    residents inhabitant inhabitants student students pupil pupils user users customer customers visitor visitors
    passenger passengers player players patient patients""".split()
)
#: nouns that count people without saying which ("how many *people*"): the number's own noun says it
GENERIC_PEOPLE = frozenset("people person persons individual individuals man men woman women".split())
#: nouns naming places ("which *river*", "the *birthplace* of")
PLACE_NOUNS = frozenset(
    """place location city town village hamlet suburb district borough county region province state country
    nation republic kingdom empire continent island peninsula archipelago coast shore bay sea ocean lake river
    stream creek canal estuary valley mountain hill hills peak summit pass plateau desert forest park
    street road square neighbourhood neighborhood municipality parish capital port harbour harbor birthplace
    hometown homeland headquarters site territory""".split()
)
#: nouns naming organisations ("which *company*", "the *school* where")
ORG_NOUNS = frozenset(
    """company corporation firm business enterprise startup manufacturer maker builder works factory studio
    label publisher newspaper magazine broadcaster network channel station airline railway operator carrier
    bank fund agency authority department ministry office bureau council board committee commission
    government administration parliament assembly court party union association society institute institution
    foundation charity organisation organization university college school academy laboratory lab museum
    library hospital clinic church team club league band orchestra choir group army navy regiment
    cooperative consortium utility""".split()
)
#: the months, which name a period's end ("the end of *September*")
MONTHS = frozenset("january february march april may june july august september october november december".split())
#: ordinals, which name a quarter or a half ("the *second* quarter")
ORDINALS = frozenset("first second third fourth fifth last final".split())
#: nouns asking for a date ("in which *year*", "on what *date*")
DATE_NOUNS = frozenset("year date day month decade century era season quarter period time".split())
#: nouns asking for a number ("what is the *population*", "what *share*"): amounts, counts and the measured
#: quantities of reports and papers ("what detection *threshold*", "what average *lag*")
NUMBER_NOUNS = frozenset(
    """number amount count total sum figure value population percentage percent share rate ratio proportion
    fraction margin budget actual actuals outturn appropriations cost costs price fee fees charge spending expenditure expense expenses revenue
    revenues income sales bookings profit loss earnings payroll salary wage wages allocation appropriation funding grant
    balance reserve debt deficit surplus capacity headcount attendance enrollment enrolment length height
    width depth area size distance elevation altitude weight mass volume speed duration age score accuracy
    error bill payment invoice tariff toll fare rent tax levy premium dividend bonus range outlook guidance forecast
    projection target estimate f1 mae rmse mse auc precision recall median mean average threshold lag delay
    latency temperature pressure concentration density frequency yield efficiency uncertainty deviation variance
    throughput resolution amplitude magnitude intensity dose bias tolerance retention drift discharge energy
    power flow consumption output emissions load velocity conductivity humidity rainfall runoff strength
    stiffness""".split()
)
#: the noun after "which"/"what" -> the answer type it asks for (person, place, organisation, date, number)
NOUN_TYPES: dict[str, str] = {
    **dict.fromkeys(PERSON_NOUNS, "person"),
    **dict.fromkeys(PLACE_NOUNS, "place"),
    **dict.fromkeys(ORG_NOUNS, "org"),
    **dict.fromkeys(DATE_NOUNS, "date"),
    **dict.fromkeys(NUMBER_NOUNS, "number"),
}

#: verbs of having and containing ("how many hours does the corpus *hold*", "what does the plan *include*"):
#: a sentence says them by juxtaposition ("the corpus, 1,240 hours of recordings"), so they are no relation word
HAVING_VERBS = frozenset("have hold contain include comprise feature possess use employ".split())
#: verbs whose object is an amount ("what did X *spend*", "how much does X *request*"), with the accounting verbs
#: of recognising one ("how much revenue did X *book* / *generate* / *post*"): asked of money, the currency says
#: them, and a document says them another way ("X's budget is $2 million", "revenue was $16.9 million")
AMOUNT_VERBS = frozenset("cost weigh earn charge pay measure total amount spend invest borrow raise owe request "
                         "budget allocate appropriate propose fund receive collect earmark book generate post".split())  # fmt: skip
#: the amount verbs whose object is always an amount ("what *drift* did the study measure", "what *fee* does
#: X charge"; not "receive", "raise", "collect": "what prize did the film receive")
QUANTITY_VERBS = frozenset("cost weigh earn charge pay measure total spend invest borrow owe budget allocate".split())
#: nouns that name a measured quantity when a word before them says which ("the *Q factor*", "a median *response
#: time*", "the drag *coefficient*") and something else alone ("what *factor* drove it", "at what *time*")
MEASURED_WITH_MODIFIER = frozenset("factor time coefficient constant".split())
#: nouns that only say an amount asked is money paid out ("what is X's main replacement *spending*", "the *cost*
#: of Y"): the currency says them, a budget line states the amount without them
SPENDING_NOUNS = frozenset("spending expenditure expenditures outlay outlays funding cost costs".split())
#: nouns of money a count may be of ("how many *dollars*")
CURRENCY_NOUNS = frozenset("dollar euro pound yen franc krona crown cent penny".split())
#: phrasal verbs that say the same as an amount verb ("how much is *set aside* for overtime")
AMOUNT_PHRASES = frozenset({("set", "aside"), ("put", "aside"), ("set", "apart"), ("bring", "in"), ("take", "in"), ("pull", "in"),
                            ("rake", "in")})  # fmt: skip
#: words that mark a statement as a forecast, not a result ("we *expect* revenue of $150 million", "*guidance*")
FORECAST_WORDS = frozenset("expect forecast project anticipate predict guidance outlook estimate guide".split())
#: nouns that name the form of an answer, not what it is about ("what revenue *range*", "what *figure*")
SHAPE_NOUNS = frozenset("amount figure number value total sum range count estimate level kind type sort name".split())
#: nouns that name the level of an organisation's part ("the traffic enforcement *unit*", "the parks
#: *division*"): the kind of a named part, which its heading or table need not repeat
UNIT_NOUNS = frozenset("unit division department office bureau branch team programme program service".split())
#: nouns for the people of an organisation's part ("the distribution *crews*", "the billing *staff*", "the
#: treatment *workforce*"): they stand for the part, whose heading or table need not name them
GROUP_NOUNS = frozenset("crew crews staff workforce squad squads personnel".split())
#: headings of sections that restate the rest of a document ("Abstract", "Summary")
SUMMARY_HEADINGS = frozenset("abstract summary overview introduction conclusion conclusions highlights executive".split())
#: the conventional names of a document's unnumbered parts, a line of its own in plain text ("Abstract",
#: "References"): a heading wherever such a line stands alone
SECTION_NAMES = frozenset({
    "abstract", "summary", "executive summary", "overview", "introduction", "background", "related work",
    "method", "methods", "methodology", "materials and methods", "data", "data and methods", "results",
    "discussion", "results and discussion", "conclusion", "conclusions", "limitations", "future work",
    "acknowledgements", "acknowledgments", "references", "bibliography", "works cited", "literature cited",
    "appendix", "notes", "contents", "table of contents",
})
#: words that name a reporting period or its length ("*quarterly* revenue in Q3"), said by the period itself
PERIOD_WORDS = frozenset("quarter quarterly annual annually yearly monthly weekly fiscal half year month week".split())
#: nouns that name a document as a whole ("the *study* that X cites"): they say where a fact is, not what it is
DOCUMENT_NOUNS = frozenset("paper study article report document publication survey work memo memorandum letter "
                           "transcript filing".split())  # fmt: skip
#: nouns by which one document cites another's figures ("the *plan's* figure of €1,980 thousand", "$4.1 million *in the
#: budget*"): a figure so named in a review is the reviewed document's, not the review's own
CITED_DOCUMENT_NOUNS = DOCUMENT_NOUNS | frozenset("plan budget audit review resolution minutes".split())
#: words that "how" turns into a question for a number: adjectives of size, age, time and rate ("how *high*",
#: "how *long*") and adverbs of rate or precision, answered by a measured figure ("how *accurately* could it
#: measure angles": "to 2 arc-seconds"; "how *quickly*": "at 40 km/h")
HOW_NUMBER = frozenset(
    "many much long old far tall big large high deep wide heavy fast often early late "
    "accurately precisely quickly rapidly frequently".split()
)
#: nouns that name a part of a document ("which *section* explains ...")
STRUCTURAL_NOUNS = frozenset("section subsection part chapter heading paragraph appendix annex article clause".split())


# ------------------------------------------------------------------------------------------ measures
@dataclass(frozen=True)
class Measure:
    """A measured property: the words a question asks for it with, and the units a number of it is written
    with (a number of that measure is the answer: "how high" -> "884 metres")."""

    name: str
    asks: frozenset[str]  # question words (lemmas) that ask for it
    units: frozenset[str]  # unit words (lower case) a number of it carries


def _m(name: str, asks: str, units: str) -> Measure:
    return Measure(name, frozenset(asks.split()), frozenset(units.split()))


_LENGTH_UNITS = "m metre metres meter meters km kilometre kilometres kilometer kilometers mile miles ft foot feet yard yards cm centimetres mm"
#: measured properties, by the words that ask for them (a class: numbers that carry a unit of measure)
MEASURES: tuple[Measure, ...] = (
    _m("area", "area surface size acreage", "km² km2 square hectare hectares ha acre acres m² m2"),
    _m("height", "high height tall elevation altitude summit", _LENGTH_UNITS),
    _m("depth", "deep depth", _LENGTH_UNITS),
    _m("length", "long length distance far wide width span", _LENGTH_UNITS),
    _m("mass", "heavy weight mass", "kg kilogram kilograms tonne tonnes ton tons g gram grams lb pounds"),
    _m("duration", "duration long last", "second seconds minute minutes hour hours day days week weeks month months year years"),
    _m("age", "old age", "year years"),
    _m("speed", "fast speed", "km/h mph knots"),
    _m("temperature", "temperature hot cold warm", "°c °f degrees"),
    _m("population", "population populous inhabitant inhabitants resident residents live", "inhabitants residents"),
)

# ------------------------------------------------------------------------------------------ arithmetic
#: words asking for a sum ("the *combined* budget", "how many *in total*", "*add up* to")
SUM_WORDS = frozenset("total combined combine sum together altogether aggregate add added adding".split())
#: sum words that only say the members are added ("the *combined* revenue of A and B"): an operand's question
#: drops them ("the revenue of A"); "total" stays, it is often part of what is measured ("total revenue")
ONLY_ADDING = frozenset("combined together altogether".split())
#: words that name a change between two values of one thing ("how much did X *grow*")
CHANGE_WORDS = frozenset(
    "change changed changes increase increased increases decrease decreased decreases grow grew grown growth rise "
    "rose risen fall fell fallen drop dropped decline declined shrink shrank cut reduce reduced reduction gain gained "
    "lose lost".split()
)
#: comparatives and superlatives that pick the larger, and the smaller, of compared numbers
COMPARE_MORE = frozenset("more larger bigger higher greater longer taller heavier deeper wider costlier".split())
COMPARE_LESS = frozenset("less fewer smaller lower shorter lighter shallower narrower cheaper".split())
#: comparatives that pick the earlier, and the later, of compared dates
COMPARE_EARLIER = frozenset("first earlier earliest older oldest before sooner previously initially".split())
COMPARE_LATER = frozenset("later latest younger youngest newer newest after last recent recently".split())
#: superlatives asking for the largest / the smallest member of a set ("which item grew *the most*")
SUPERLATIVE_MAX = frozenset("largest biggest highest greatest most longest tallest heaviest deepest widest top fastest "
                            "quickest".split())  # "grows fastest": the largest growth
SUPERLATIVE_MIN = frozenset("smallest lowest least fewest shortest lightest shallowest narrowest slowest".split())
MIN_WORDS = SUPERLATIVE_MIN | COMPARE_LESS
#: words that only say an operation or a number is wanted: never what is measured
OPERATION_WORDS = (
    SUM_WORDS | CHANGE_WORDS | COMPARE_MORE | COMPARE_LESS | COMPARE_EARLIER | COMPARE_LATER | SUPERLATIVE_MAX
    | SUPERLATIVE_MIN | frozenset("early late old young new".split())
    | frozenset("much many difference differ exceed exceeds exceeded gap versus vs compare compared ratio times "
                "percent percentage amount figure number value than between".split())
)  # fmt: skip
#: quantifiers that name a set of rows or sections to add up ("*every* electricity line", "the *two* plants")
QUANTIFIERS = {"all": None, "every": None, "each": None, "both": 2, "two": 2, "three": 3, "four": 4, "five": 5,
               "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}  # fmt: skip
#: nouns that name a group of table rows or sections as a whole ("the *subsections* of X add up to")
GROUP_WORDS = frozenset("subsections sections parts programs programmes divisions departments units items lines components".split())
#: column headers that restate two other columns of their row (a difference or a percentage change)
DERIVED_COLUMNS = frozenset("change changes difference variance delta increase decrease growth".split())

# ------------------------------------------------------------------------------------------ relations
#: adjectives of a rate per period ("*monthly* drift" is drift "per month"): the period noun they are of
RATE_ADJECTIVES = {"hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month", "quarterly": "quarter",
                   "yearly": "year", "annual": "year", "annually": "year"}  # fmt: skip
#: nominalisations and agent nouns whose verb the lemmatiser does not give ("place of *birth*": bear)
IRREGULAR_VERBS = {
    "birth": "bear", "born": "bear", "birthplace": "bear", "hometown": "bear", "deathplace": "die", "death": "die", "dead": "die", "marriage": "marry", "sale": "sell",
    "loss": "lose", "growth": "grow", "founder": "found", "foundation": "found", "creator": "create",
    "successor": "succeed", "burial": "bury", "flight": "fly", "speech": "speak", "choice": "choose",
    "gift": "give", "proof": "prove", "arrival": "arrive", "departure": "depart", "resident": "reside",
    "inhabitant": "inhabit", "employer": "employ", "employee": "employ", "leader": "lead", "owner": "own",
    "student": "study", "closure": "close", "failure": "fail", "approval": "approve", "refusal": "refuse",
    "renewal": "renew", "withdrawal": "withdraw", "removal": "remove", "survival": "survive",
}  # fmt: skip
#: words that name where a statement comes from ("*according* to the audit, ..."): the source, which the
#: question's names give, not what it asks about
ATTRIBUTION_WORDS = frozenset("accord according".split())
#: verbs of a beginning: when something began is how old it is, and which of two came first
START_VERBS = frozenset(
    "found establish bear form create open launch build start begin publish release incorporate introduce "
    "inaugurate construct complete appear debut premiere".split()
)
#: the beginning and end of a life: said as such ("born", "died") or by a life span "(1851–1929)"
LIFE_VERBS = frozenset("bear die".split())
#: words that ask about the works a document cites or builds on ("the paper that X *cites*")
CITATION_WORDS = frozenset(
    "cite cites cited citing builds build built reference references referenced prior earlier original introduced "
    "introduces introduce proposed proposes paper papers study studies".split()
)
#: how a question says a gap between two sources' figures ("by how much does the budget *overstate* X", "how
#: far do the two documents *differ*", "fall *short*"), and the verbs of holding a view on it ("does the auditor
#: *believe*", "the auditor *disputes*"): where and how the gap is said, not what the figure is of
GAP_WORDS = frozenset("overstate understate differ short discrepancy dispute believe".split())
#: words that leave a sentence open at the end of a line, so a hard-wrapped line's sentence goes on in the next
#: (conjunctions, articles, prepositions, relative words: "... revenue was $41.6 million *and*")
OPEN_ENDED_WORDS = frozenset("and or but nor of the a an to in on for with from by at as than that which who whose".split())
#: verbs by which a body or a document states a figure or holds a view of one ("what count does the committee
#: *give*", "what does the memo *project*", "what does the committee *expect*"): their subject is where the answer
#: is said
REPORTING_VERBS = frozenset(
    "give report state project calculate estimate consider put say find list record show claim publish disclose "
    "assume cite quote count forecast adopt approve recommend propose expect anticipate believe".split()
)
#: words that mark a figure as superseding an earlier one ("Q2 2024 *restated*"): the figure that stands now
RESTATED_WORDS = frozenset("restated revised corrected amended adjusted updated".split())
#: words that mark a figure as the one first published ("Q2 2024 *as reported*", "*originally* reported"); a
#: question that asks for that one says so with :data:`ORIGINAL_ASKED` (not "first": "the *first* quarter" names
#: a period)
ORIGINAL_WORDS = frozenset("reported original originally previously initial initially".split())
ORIGINAL_ASKED = frozenset("original originally previously initially initial".split())
#: past verbs of publishing that, after a figure, mark it as the one first published ("the $90.3 million we
#: *reported* in August", "the 11,200 *announced* in May")
PUBLISHED_AFTER = frozenset("reported published announced disclosed".split())
#: the verb that says a document cites a work ("the study that X *cites*"), in its forms
CITING_VERBS = frozenset("cite cites cited citing".split())
#: two-word phrases that say a work rests on an earlier one it cites ("the paper *builds on* ...")
CITING_PHRASES = frozenset({("builds", "on"), ("build", "on"), ("built", "on"), ("builds", "upon"), ("build", "upon"),
                            ("built", "upon")})
#: words that introduce a stated cause ("revenue fell *because of* ...")
CAUSE_MARKERS = (
    "because of", "because", "due to", "driven by", "owing to", "as a result of", "thanks to", "caused by",
    "attributed to", "reflecting", "reflects", "resulting from", "on account of", "the result of", "led by",
)  # fmt: skip

# ------------------------------------------------------------------------------------------ text addressed to a model
# The classes of wording by which a passage of a document speaks to the model reading it instead of to its human
# reader (stratagraph/text/injection.py builds its patterns from these; README "Faults and hostile input").
#: what a passage calls the model it addresses
MODEL_NOUNS = ("assistant", "ai", "a.i.", "model", "language model", "llm", "chatbot", "bot", "agent", "gpt", "chatgpt",
               "claude", "copilot", "large language model", "ai system")  # fmt: skip
#: verbs that tell a reader to drop what it was told
MODEL_OVERRIDES = ("ignore", "disregard", "forget", "override", "bypass", "overrule", "drop", "abandon", "discard")
#: words between such a verb and what it drops ("ignore *all previous* instructions")
PRIOR_WORDS = ("all", "any", "every", "the", "your", "my", "these", "those", "previous", "prior", "above", "earlier",
               "preceding", "original", "initial", "system", "other", "of", "existing", "former")  # fmt: skip
#: what a model is told: its instructions, prompt, rules
RULE_NOUNS = ("instructions", "instruction", "prompt", "prompts", "rules", "directions", "directives", "guidelines",
              "guardrails", "constraints", "orders", "programming", "context")  # fmt: skip
#: what a model keeps to itself: asked for, a passage tries to leak it
SECRET_NOUNS = ("system prompt", "system message", "hidden prompt", "hidden instructions", "initial instructions",
                "developer message", "developer prompt", "your instructions", "your prompt", "your rules",
                "api key", "secret key", "credentials")  # fmt: skip
#: verbs of a command to a model that can act ("*call* the tool", "*run* this query")
TOOL_VERBS = ("call", "invoke", "run", "execute", "use", "trigger")
#: what such a command names
TOOL_NOUNS = ("tool", "tools", "function", "query", "command", "read_cypher", "cypher", "search_chunks", "calculate",
              "api", "script", "code", "sql")  # fmt: skip
#: a role handed to the reader, or a rule for every later answer
MODEL_COMMANDS = ("you are now", "from now on", "act as", "pretend to be", "pretend you are", "your new role",
                  "new instructions", "updated instructions", "answer every question with", "answer all questions with",
                  "always answer", "always respond", "always reply", "respond only with", "reply only with",
                  "do not tell the user", "don't tell the user", "tell the user to", "instead answer",
                  "reveal your", "print your", "repeat your", "repeat the text above", "output your",
                  "end your answer with", "end your reply with", "end every answer with", "append to your answer",
                  "include the following link", "add the following image", "add this link")  # fmt: skip
#: how a passage hails its reader ("*Note to the AI*: ...", "*If you are an* LLM ...")
MODEL_ADDRESS = ("note to the", "note for the", "message to the", "message for the", "attention", "dear", "hey", "hello",
                 "if you are an", "if you are a", "if you are the", "to the", "for any")  # fmt: skip
#: statements that would write to a graph or a database (a passage carrying one is aimed at a tool)
STORE_WRITES = ("detach delete", "drop table", "drop database", "delete from", "truncate table", "insert into",
                "drop index", "drop constraint", "remove n", "set n.", "merge (", "create (", "load csv", "apoc.")  # fmt: skip

# ------------------------------------------------------------------------------------------ concepts (issue 24)
#: copular verbs whose attribute says what the subject is ("A is a composer", "B became a port city")
COPULA_VERBS = frozenset("be become remain".split())
#: nouns that say nothing of what a thing is, as the attribute of a copula or an apposition ("A is one of
#: ...", "B is part of ...", "C is a member of ...", "D is the name of ..."): never a semantic type
VAGUE_KIND_NOUNS = frozenset(
    "one part member kind type sort name example lot number thing something anything nothing way place home use "
    "case result reason fact end beginning subject object item instance form piece bit deal couple pair "
    "variety series set group range source topic focus basis site".split()
)
#: nouns of kinship ("his wife, Christine", "A is the son of B"): a relation to someone, not a kind of thing
KINSHIP_NOUNS = frozenset(
    "son daughter father mother wife husband brother sister child parent spouse widow widower cousin uncle aunt "
    "nephew niece grandson granddaughter grandfather grandmother grandchild heir heiress sibling stepson "
    "stepdaughter stepfather stepmother".split()
)
#: plural nouns whose singular no spelling rule finds ("which people", "the women who")
IRREGULAR_PLURALS = {
    "people": "person", "men": "man", "women": "woman", "children": "child", "mice": "mouse", "geese": "goose",
    "teeth": "tooth", "feet": "foot", "oxen": "ox", "criteria": "criterion", "phenomena": "phenomenon",
}
#: table column headings that name no class of the rows under them ("Item", "Description", "Line item")
WEAK_COLUMN_HEADINGS = frozenset("item items line description name names label category detail details total".split())
