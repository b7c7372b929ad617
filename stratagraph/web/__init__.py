"""``stratagraph serve``: a local web page over one store (:func:`~stratagraph.web.app.create_app`)."""

from stratagraph.web.app import create_app, serve

__all__ = ["create_app", "serve"]
