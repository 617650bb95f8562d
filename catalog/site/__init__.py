"""The HTML directory: the site's pages (pages), what each page links and lists (plan), its
head and base URL (meta), a score's explanation (score) and its search-engine files (seo)."""
