"""funke.plan"""
