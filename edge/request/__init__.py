"""What a request asks, parsed and bounded: query parameters (query) and signed page
cursors (cursor), shared by every endpoint."""
