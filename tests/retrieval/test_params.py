"""Every tunable of the retrieval layer sits in a Params model and says where its value comes from."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from stratagraph.retrieval import bottom_up, classify, dual_path, fusion, hybrid, index, lesegr, ppr, top_down, traversal
from stratagraph.retrieval.calibration import CosineFloors

MODELS: list[type[BaseModel]] = [
    fusion.FusionParams, ppr.PPRParams, dual_path.DualPathParams, hybrid.HybridParams, traversal.TraversalSettings,
    classify.TraversalParams, top_down.TopDownParams, bottom_up.BottomUpParams, lesegr.LeSeGRParams, CosineFloors, index.PageRankParams,
]  # fmt: skip
PROVENANCE = ("paper", "ours", "chosen on", "the ")


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_field_states_its_provenance(model: type[BaseModel]) -> None:
    for name, field in model.model_fields.items():
        assert field.description, f"{model.__name__}.{name} has no provenance"
        assert field.description.startswith(PROVENANCE) or "paper" in field.description, (model.__name__, name)


def test_pagerank_parameters_live_in_one_place() -> None:
    assert ppr.PPRParams().pagerank == index.PageRankParams()
    assert index.PageRankParams().damping == 0.5
