"""SkyRL-gym: one ``BaseTextEnv`` per env id, registered in skyrl-gym's registry."""
