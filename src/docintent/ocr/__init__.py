"""docintent.ocr"""
