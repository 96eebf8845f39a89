"""Layout reconstructed from OCR: tables (:mod:`.table`) and the geometry of text lines (:mod:`.lines`)."""
