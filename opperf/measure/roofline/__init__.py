"""Roofline context for a measurement: the work an operator does, the machine's peaks, and where a
measured time sits between them."""
