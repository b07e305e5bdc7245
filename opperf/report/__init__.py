"""Renderers: each takes a sweep's results and returns text. None imports a framework."""
