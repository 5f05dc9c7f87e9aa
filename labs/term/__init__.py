"""The terminal: the command line, the learner's language, columns, and watch mode."""
