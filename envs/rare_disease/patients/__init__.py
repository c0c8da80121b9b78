"""Simulated rare-disease patients: the sampler and its draws, presentation, prompts, splits by disease and the case statistics they are calibrated to."""
