"""promotion"""
