"""Team mode: the vault shared through git, its merge driver and what must hold after a merge."""
