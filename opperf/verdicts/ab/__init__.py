"""Interleaved A/B jobs between two builds: the rounds, their journal, and the sequential schedule
that spends them."""
