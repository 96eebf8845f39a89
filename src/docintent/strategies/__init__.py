"""docintent.strategies"""
