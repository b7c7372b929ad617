"""Text helpers that ingestion and retrieval both need, so that neither imports the other:

* :mod:`stratagraph.text.titles`: title normalisation and the page-title index;
* :mod:`stratagraph.text.names`: entity-name keys;
* :mod:`stratagraph.text.nlp`: the shared spaCy pipeline and its numeric entity labels.

Nothing is imported here: each submodule is loaded on its own (``nlp`` pulls in spaCy only when called).
"""
