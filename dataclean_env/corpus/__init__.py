"""The real-table corpus: clean tables that well-kept packages ship for offline use, with
error layers made by tab-err at build time (integrations/corpus/build_corpus.py), composed
into seeded dirty tables at reset (`instances.py`). See docs/real-tables.md, "The corpus"."""
