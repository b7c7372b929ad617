"""Evaluation: datasets, metrics (recall@k, hit@k, EM, F1) and runners."""
