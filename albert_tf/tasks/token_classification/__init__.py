"""Token classification (NER, POS, any tag set): `run_ner.py` and `TokenClassifier`.

config.py (the run config, TensorFlow-free), data.py (CoNLL and JSONL sentences, labels),
features.py (words → pieces → overlapping windows, the keyed feature cache), metrics.py
(conlleval's entity precision/recall/F1), results.py (eval_results.txt, labels.json,
test_predictions.conll), task.py (`NerTask` on the driver), export.py (the SavedModel and TFLite
files), api.py (`TokenClassifier`).
"""
