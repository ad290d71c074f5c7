"""Reports of the 'equivariant-ntk' task (none yet): return {name: Figure or DataFrame}."""
