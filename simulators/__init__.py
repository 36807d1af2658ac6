"""Simulated table devices that speak the same wire protocol as the real ones."""
