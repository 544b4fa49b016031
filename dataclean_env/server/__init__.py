"""HTTP routes of the server."""
