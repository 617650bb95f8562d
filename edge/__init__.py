"""The edge service: serves /v1 from the build's dist/ and from the account store."""
