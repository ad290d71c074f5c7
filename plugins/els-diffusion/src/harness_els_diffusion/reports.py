"""Reports of the 'els-diffusion' task (none yet): return {name: Figure or DataFrame}."""
