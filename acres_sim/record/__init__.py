"""Headless recording: the same models as the live rig, no middleware, files out."""
