"""The directory as the edge serves it: a build's pages held in memory (pages) and the
answers to searches and filters no shard holds (search)."""
