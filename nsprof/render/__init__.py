"""Render layer: figures from analysis results. Functions return Figures; callers save them."""
