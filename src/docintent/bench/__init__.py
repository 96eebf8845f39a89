"""docintent.bench"""
