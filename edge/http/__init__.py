"""The HTTP steps every request goes through (request id, errors, CORS, rate limit), the
error responses, conditional requests and the access log."""
