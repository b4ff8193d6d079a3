"""Pure numpy/numba models. Nothing here imports ROS."""
