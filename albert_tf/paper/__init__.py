"""The ALBERT paper in miniature: its ablations (Tables 3, 4, 5), Table 2's speed column and
Figure 1, on your own text: `python -m albert_tf.paper --input_file=TEXT --output_dir=DIR`.
See docs/paper.md."""
