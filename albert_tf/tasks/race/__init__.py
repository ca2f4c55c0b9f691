"""RACE: reading the passages and questions, the task."""
