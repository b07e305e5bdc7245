"""What is measured, as data: operator descriptions, input rules, fused patterns, long-tail
operators and the names operators go by in each framework's namespaces."""
