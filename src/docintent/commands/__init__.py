"""docintent.commands"""
