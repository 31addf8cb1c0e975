"""Knowing what changed: listing notes, the kernel's reports, the hook journal."""
