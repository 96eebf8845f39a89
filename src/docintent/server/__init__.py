"""docintent.server"""
