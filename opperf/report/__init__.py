"""Renderers: each takes results (typed by ``opperf.results``) and returns text, a page or a
workbook. None imports a framework."""
