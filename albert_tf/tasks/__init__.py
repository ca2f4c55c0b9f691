"""Fine-tuning tasks: GLUE classification, SQuAD span extraction, RACE multiple choice."""
