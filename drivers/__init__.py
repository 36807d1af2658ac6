"""Device drivers: the shared framing codec, the transport and one driver per table device."""
