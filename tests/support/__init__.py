"""Helpers the tests share (not tests themselves): statistics of pretraining records and
two-sample tests used to compare generators."""
