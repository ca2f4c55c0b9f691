"""RACE 4-way multiple choice: reading articles, features and their keyed TFRecord caches
(`data`), and the task (`task`)."""
