"""The no-LLM reader every workflow shares (DESIGN.md "Layout"): evidence handed to it in, a typed answer out.

* :mod:`~stratagraph.reading.frame`: the question's frame, computed once (expected type, names, relation
  words, measure, periods, the computation asked);
* :mod:`~stratagraph.reading.sentences`: the evidence split into sentences and table rows;
* :mod:`~stratagraph.reading.spans`: a span of the expected type, else the sentence, else not found;
* :mod:`~stratagraph.reading.tables`: cells, sets, section totals and superlatives over table rows;
* :mod:`~stratagraph.reading.arithmetic`: one planner, exact computation, one renderer;
* :mod:`~stratagraph.reading.choice`: choices between two options, decided from cited values;
* :mod:`~stratagraph.reading.sections`: answers that are headings;
* :mod:`~stratagraph.reading.reader`: :func:`read`, which picks among them by the frame.

Every English word list is in :mod:`stratagraph.text.lexicon`; the reader reads English (another language
needs a chat model). It touches no store and calls no model.
"""

from stratagraph.reading.frame import Frame, frame_of
from stratagraph.reading.reader import read
from stratagraph.reading.result import Reading, not_found

__all__ = ["Frame", "Reading", "frame_of", "not_found", "read"]
