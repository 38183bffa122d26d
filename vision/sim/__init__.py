"""The table simulator: rendered scenes, hand movies and the demo camera.

Test and benchmark material, and the camera of ``demo``. Recognition (the
modules directly in ``vision/``) never imports this package.
"""
