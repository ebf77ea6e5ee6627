"""Image (Glance v2, minimal): the images that servers boot from."""
