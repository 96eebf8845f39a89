"""docintent.retrieval"""
