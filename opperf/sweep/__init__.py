"""A sweep of a registry: the run, its checkpoint, shards and merge, the public names it selects by,
and the models it captures configurations from."""
