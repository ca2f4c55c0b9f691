"""SQuAD v1.1/v2.0: reading, features, heads, post-processing and the official metrics.

Data flows reader → features → (model) → postprocess → metrics; each is its own module.
"""
