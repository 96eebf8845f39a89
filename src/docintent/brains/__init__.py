"""docintent.brains"""
