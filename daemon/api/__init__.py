"""HTTP and WebSocket operator API and the dealer console page."""
