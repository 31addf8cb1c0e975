"""`ocm ui`: a local dashboard over the project's vault and the user scope (timeline,
memories, the next brief, search, actions, live updates, pictures), served on 127.0.0.1.
It reads and acts only through the `Project` facade (ocm/project.py)."""
