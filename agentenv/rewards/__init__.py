"""Rewards: RewardConfig and its presets (config), the documented components, reward files."""
