"""funke.cli"""
