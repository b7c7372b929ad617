"""Text helpers that more than one layer needs (ingestion, retrieval, the agents), so that none imports another:

* :mod:`stratagraph.text.titles`: title normalisation and the page-title index;
* :mod:`stratagraph.text.names`: entity-name keys;
* :mod:`stratagraph.text.nlp`: the shared spaCy pipeline and its numeric entity labels;
* :mod:`stratagraph.text.roles`: each clause's arguments with their logical roles (subject, object, agent,
  attribute, oblique), read off spaCy's parse: what ingestion stores on facts and a reader parses at query time;
* :mod:`stratagraph.text.periods`: reporting periods as questions write them (quarters, halves, fiscal years);
* :mod:`stratagraph.text.question`: what a question asks for (its expected answer type and content words).

Nothing is imported here: each submodule is loaded on its own (``nlp`` pulls in spaCy only when called).
"""
