"""funke.runtime"""
