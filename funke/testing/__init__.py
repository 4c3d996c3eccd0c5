"""funke.testing"""
