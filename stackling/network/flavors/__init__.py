"""Network flavors and service profiles (`flavors`) and service providers (`service-type`)."""
