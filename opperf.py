#!/usr/bin/env python3
"""Sweep MXNet's operator registry and write a report: ``python opperf.py --help``."""

import sys

from opperf.cli import main

if __name__ == "__main__":
    sys.exit(main())
