"""Pretraining (masked LM + sentence order) as a task."""
