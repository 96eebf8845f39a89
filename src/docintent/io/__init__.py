"""docintent.io"""
