"""GLUE: task readers, example → feature conversion with a keyed cache, metrics, result files."""
