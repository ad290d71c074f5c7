"""Reports of the 'lsmooth-gd' task (none yet): return {name: Figure or DataFrame}."""
