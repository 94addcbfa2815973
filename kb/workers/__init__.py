"""Entry points that run inside child processes: each imports its engine, and nothing heavy of kb."""
