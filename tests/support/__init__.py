"""Helpers the tests share (not tests themselves; fixtures are in conftest.py): repository and
../shared paths, tiny model configs, the original's golden training data, a tiny pretraining run,
statistics of pretraining records and the two-sample tests that compare generators."""
