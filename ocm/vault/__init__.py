"""Notes on disk. Imports nothing else from `ocm`."""
