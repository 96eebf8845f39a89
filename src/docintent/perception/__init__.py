"""docintent.perception"""
