"""Who is calling: the API key step of the request path and the cached key verification."""
