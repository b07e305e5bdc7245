"""Did it change? Every answer opperf gives, with the statistics behind it.

``opperf diff BASE NEW`` calls each row (operator configuration and phase) slower, faster, same,
inconclusive, new, gone, newly-failing, fixed or incomparable: ``diff`` matches rows and assembles
verdicts; ``inference`` (with ``distributions``) is the statistics, ``decide`` the rule;
``document``, ``markdown`` and ``table`` render. The jobs that measure for a verdict live beside
them: ``ab`` (two builds, interleaved rounds), ``compare`` (namespaces, interleaved rounds) and
``history`` (a store of runs and the steps in each series). Result files are read by
``opperf.results.load``. No framework is imported.
"""
