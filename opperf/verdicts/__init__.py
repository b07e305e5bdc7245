"""Verdicts between sweeps: ``opperf diff BASE NEW`` calls each row (operator configuration and
phase) slower, faster, same, inconclusive, new, gone, newly-failing, fixed or incomparable.

Layers, each a module: ``load`` reads result files into typed runs; ``diff`` matches rows and
assembles verdicts; ``inference`` (with ``distributions``) is the statistics, ``decide`` the rule;
``document``, ``markdown`` and ``table`` render; ``cli`` is the subcommand. No framework is imported.
"""
