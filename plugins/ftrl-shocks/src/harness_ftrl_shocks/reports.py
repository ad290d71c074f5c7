"""Reports of the 'ftrl-shocks' task (none yet): return {name: Figure or DataFrame}."""
